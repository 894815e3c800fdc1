//! What limited the selftest's bulk sender besides the path, from its
//! `TCP_INFO`: the label on the headline figure of an unlimited path.

use serde::Serialize;

/// The share of the bulk senders' busy time that something other than the
/// path limited, from their `TCP_INFO` at the end of the download
/// (`tcpi_rwnd_limited`, `tcpi_sndbuf_limited` over `tcpi_busy_time`,
/// summed over the flows). Why: with no rate set, goodput is the
/// emulator's ceiling only when neither limited the flow; a receive window
/// or send buffer capped by `tcp_rmem`/`tcp_wmem` caps it at about
/// buffer/RTT, the Windows seed's lesson, whatever the forwarder can do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct SenderLimits {
    /// Share of busy time limited by the receiver's window.
    pub rwnd: f64,
    /// Share of busy time limited by the send buffer.
    pub sndbuf: f64,
    /// The receiver's buffer at the end (`SO_RCVBUF` after autotuning),
    /// bytes.
    pub receive_buffer: Option<u64>,
}

/// Limited this share of its busy time or more, a flow's goodput says
/// more about its buffers than about the path.
pub const LIMITED_SHARE: f64 = 0.1;

impl SenderLimits {
    /// Summed over the flows; `None` when no flow reported the times.
    pub fn of(infos: &[tcpwise_tcp::TcpInfo]) -> Option<SenderLimits> {
        // The kernel's busy time includes the limited times.
        let (mut busy, mut rwnd, mut sndbuf) = (0u64, 0u64, 0u64);
        for i in infos {
            busy += i.busy_time_us?;
            rwnd += i.rwnd_limited_us?;
            sndbuf += i.sndbuf_limited_us?;
        }
        let all = busy.max(1) as f64;
        (!infos.is_empty()).then_some(SenderLimits {
            rwnd: rwnd as f64 / all,
            sndbuf: sndbuf as f64 / all,
            receive_buffer: None,
        })
    }

    /// Whether the buffers, not the path, set the pace.
    pub fn limited(&self) -> bool {
        self.rwnd + self.sndbuf >= LIMITED_SHARE
    }

    /// What set the pace when [`limited`](Self::limited), given the
    /// goodput it reached over a round trip of `rtt_ms`: the send buffer;
    /// the receive buffer's size (its usable half, the most a window
    /// offers, carries about that goodput over the round trip); or a
    /// receiver that read slower than data came (a window that size would
    /// have carried far more: its buffer stood full of unread data, the
    /// endpoints' CPU).
    pub fn cause(&self, goodput_mbit: f64, rtt_ms: f64) -> &'static str {
        let window_mbit = self
            .receive_buffer
            .map(|b| b as f64 / 2.0 * 8.0 / (rtt_ms.max(0.001) * 1e3));
        if self.sndbuf > self.rwnd {
            "the send buffer (tcp_wmem), not the forwarder, set this ceiling (below)"
        } else if window_mbit.is_some_and(|w| goodput_mbit < 0.7 * w) {
            "the receiver read slower than data came (its window, not its buffer's size, was the limit): this machine's CPUs, shared by the endpoints and the forwarders, set this ceiling"
        } else {
            "the receive buffer's size (tcp_rmem's maximum over the round trip), not the forwarder, set this ceiling (below)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SenderLimits;

    #[test]
    fn the_label_names_what_held_the_sender() {
        // Measured on a 20 ms path: 32 MiB ceilings, 6.2 Gbit/s with a
        // 33.6 MB receive buffer (a window of half of it carries 6.7).
        let buffer = SenderLimits {
            rwnd: 0.206,
            sndbuf: 0.0,
            receive_buffer: Some(33_554_432),
        };
        assert!(buffer.limited());
        assert!(buffer.cause(6159.0, 20.0).contains("receive buffer's size"));
        // 128 MiB: 10 Gbit/s with a full 134 MB buffer (its window would
        // carry 26.8): the reader was slow.
        let reader = SenderLimits {
            receive_buffer: Some(134_217_728),
            rwnd: 0.747,
            ..buffer
        };
        assert!(reader.cause(9966.0, 20.0).contains("receiver read slower"));
        let send = SenderLimits {
            sndbuf: 0.5,
            rwnd: 0.1,
            ..buffer
        };
        assert!(send.cause(1000.0, 20.0).contains("send buffer"));
        let free = SenderLimits {
            rwnd: 0.05,
            ..buffer
        };
        assert!(!free.limited());
        assert_eq!(SenderLimits::of(&[]), None);
    }
}
