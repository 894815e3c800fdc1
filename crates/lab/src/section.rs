//! The skeleton every experiment's section of the report shares, written
//! once: the title (the experiment's name, which the report's first table
//! links to, and the field report it reproduces), the claim with what
//! this run found of it, how it ran here, then the experiment's own
//! tables and notes. The report writer puts the verdict and the decision
//! under the title and the emulator's error on every path at the end
//! ([`crate::report::section`]), so an experiment writes neither.

use std::fmt::Write;

/// One experiment's section.
#[derive(Debug, Clone, Default)]
pub struct Skeleton {
    /// The experiment's name, as on the command line.
    pub name: &'static str,
    /// What it reproduces ("Windows TCP team: no static socket buffers").
    pub reproduces: &'static str,
    /// The field report's claim, and what this run found of it.
    pub claim: String,
    /// How it ran here (the servers, the paths, the design), when the
    /// claim's paragraph does not say it.
    pub here: Option<String>,
    /// Its tables and notes, in order (`###` headings for a table per
    /// path).
    pub body: String,
}

impl Skeleton {
    /// The section's Markdown.
    pub fn markdown(&self) -> String {
        let mut md = String::new();
        let _ = writeln!(md, "## {} ({})\n", self.name, self.reproduces);
        let _ = writeln!(md, "**The claim.** {}\n", self.claim.trim_end());
        if let Some(here) = &self.here {
            let _ = writeln!(md, "**Here**: {}\n", here.trim_end());
        }
        md.push_str(&self.body);
        md
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_comes_first_and_the_parts_in_order() {
        let s = Skeleton {
            name: "buffers",
            reproduces: "a field report",
            claim: "it holds.\n".into(),
            here: Some("one path.".into()),
            body: "| a |\n|---|\n".into(),
        };
        assert_eq!(
            s.markdown(),
            "## buffers (a field report)\n\n**The claim.** it holds.\n\n**Here**: one path.\n\n| a |\n|---|\n"
        );
        let bare = Skeleton {
            here: None,
            body: String::new(),
            ..s
        };
        assert!(!bare.markdown().contains("**Here**"));
    }
}
