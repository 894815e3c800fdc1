//! The experiments, one folder each, each in four stages: a plan (what
//! to run, decided from the options before anything is set up), the
//! measurement (testbeds, servers and clients; returns typed results),
//! the analysis (figures from those results, pure) and the renderer
//! (`impl Render`: the report's section, plots and headline, pure). The
//! report writer (`report`, `html`) imports none of them.

pub mod buffers;
pub mod cold_start;
pub mod completion;
pub mod head_of_line;
pub mod idle_selection;
pub mod read_slow_start;
pub mod responsiveness;
pub mod sharing;
