"""What scripts/bench-serve and scripts/serve-cpu-ab share: a server's CPU
time to the nanosecond, hypervisor steal, waiting for a port, and nginx
(one worker, CPU 0) and other servers started pinned to CPU 0."""
import os, socket, subprocess, sys, time

BODY = "x" * 100
TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """CPU time of pid's threads, seconds, to the nanosecond: the sum of
    each thread's /proc/PID/task/TID/schedstat run time (clock ticks of
    utime + stime would be 10 ms steps). A thread that ended between two
    readings would take its time with it: both servers' threads live as
    long as the server, and the ticks are the fallback."""
    try:
        ns = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            ns += int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
        return ns / 1e9
    except (OSError, ValueError, IndexError):
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / TICK


def steal():
    return int(open("/proc/stat").readline().split()[8])


def wait_port(port, limit=5.0):
    t = time.time() + limit
    while time.time() < t:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"{os.path.basename(sys.argv[0])}: nothing listens on port {port}")


def nginx(tmp, port):
    conf = os.path.join(tmp, "nginx.conf")
    open(conf, "w").write(f"""
worker_processes 1;
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/error.log;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path {tmp}; proxy_temp_path {tmp}; fastcgi_temp_path {tmp};
  uwsgi_temp_path {tmp}; scgi_temp_path {tmp};
  server {{ listen 127.0.0.1:{port} backlog=4096; location / {{ return 200 "{BODY}"; }} }}
  server {{ listen 127.0.0.1:{port + 10} backlog=4096 http2; location / {{ return 200 "{BODY}"; }} }}
}}
""")
    p = subprocess.Popen(["taskset", "-c", "0", "nginx", "-c", conf, "-p", tmp],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    # The worker serves; the master only waits.
    time.sleep(0.2)
    kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
    return p, int(kids[0])


def pinned(cmd, port):
    """A server on CPU 0, once it listens on `port`: (process, pid that serves)."""
    p = subprocess.Popen(["taskset", "-c", "0"] + cmd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return p, p.pid
