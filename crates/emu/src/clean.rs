//! Removal of testbeds whose owner died without cleaning up (SIGKILL,
//! power loss): `tw-<pid>-…` namespaces whose pid is gone.

use crate::netns::{NETNS_DIR, ip, kill_all_in};
use crate::sys;

/// Parses the owner pid out of `tw-<pid>-<role>`.
pub fn owner_pid(name: &str) -> Option<i32> {
    name.strip_prefix("tw-")?.split('-').next()?.parse().ok()
}

/// Removes stale `tw-*` namespaces and host TUN devices; returns their names.
pub fn clean_stale() -> Result<Vec<String>, crate::EmuError> {
    let mut removed = Vec::new();
    if let Ok(dir) = std::fs::read_dir(NETNS_DIR) {
        let mut names: Vec<String> = dir
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        for name in names {
            let Some(pid) = owner_pid(&name) else {
                continue;
            };
            if sys::pid_alive(pid) {
                continue;
            }
            let path = format!("{NETNS_DIR}/{name}");
            kill_all_in(&path);
            sys::delete_named_netns(&path)
                .map_err(|e| crate::EmuError::os(format!("cannot remove {path}"), e))?;
            removed.push(name);
        }
    }
    // Host-side TUN devices vanish with their fd; a persistent one left by
    // some other tool under our name pattern is removed too.
    if let Ok(dir) = std::fs::read_dir("/sys/class/net") {
        for e in dir.flatten() {
            let Ok(name) = e.file_name().into_string() else {
                continue;
            };
            if let Some(pid) = owner_pid(&name)
                && !sys::pid_alive(pid)
            {
                ip(&["link", "del", &name])?;
                removed.push(name);
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    #[test]
    fn owner_pid_parses() {
        assert_eq!(super::owner_pid("tw-1234-c0"), Some(1234));
        assert_eq!(super::owner_pid("tw-99-3"), Some(99));
        assert_eq!(super::owner_pid("other-1"), None);
        assert_eq!(super::owner_pid("tw-x-c"), None);
    }
}
