//! The README shows only what exists: every `taskpools` subcommand and `--flag` it shows (in
//! shell blocks and inline code) is one the built binary's `--help` lists, every
//! `--example NAME` is a file in `crates/taskpools/examples/`, every relative link and repository
//! path it names exists (anchors included), the two commands stay its first section and are
//! what `.ci/run` runs, it stays a guide (at most 400 lines), and it names papers and authors,
//! never "seed N" or "the talk". The `docs/` pages' links are checked too. Each failure names the
//! file, the line and what is wrong.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The most lines the README may have.
const MAX_LINES: usize = 400;
/// The project's two commands, exactly as the README's first section shows them.
const TOUR: &str = "cargo run --release -p taskpools-bench -- tour";
const TEST: &str = "bash scripts/test.sh";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

/// A markdown file's lines, each marked with the fenced block it lies in: `None` for prose,
/// `Some(info)` for a line inside a fence whose info string is `info` (fence lines themselves
/// are prose with no text worth checking, so they are left out).
fn lines_of(text: &str) -> Vec<(usize, &str, Option<String>)> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(info) = t.strip_prefix("```") {
            fence = match fence {
                None => Some(info.trim().to_string()),
                Some(_) => None,
            };
            continue;
        }
        out.push((i + 1, line, fence.clone()));
    }
    out
}

/// The inline code spans of a prose line (single backticks).
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// GitHub's anchor for a heading: lower case, letters, digits, `-` and `_` kept, spaces to `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a markdown file's headings (a repeated heading gets `-1`, `-2`, … as on
/// GitHub).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for (_, line, fence) in lines_of(text) {
        if fence.is_some() || !line.starts_with('#') {
            continue;
        }
        let s = slug(line.trim_start_matches('#'));
        let n = seen.entry(s.clone()).or_insert(0);
        out.insert(if *n == 0 {
            s.clone()
        } else {
            format!("{s}-{n}")
        });
        *n += 1;
    }
    out
}

/// The targets of a prose line's markdown links, `[text](target)`.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(j) = rest.find(')') {
            out.push(rest[..j].trim());
            rest = &rest[j + 1..];
        }
    }
    out
}

/// Collects failures as `FILE:LINE: what  |  the line`.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, file: &str, n: usize, what: impl std::fmt::Display, line: &str) {
        self.0
            .push(format!("{file}:{n}: {what}\n    | {}", line.trim()));
    }
    fn check(self, what: &str) {
        assert!(
            self.0.is_empty(),
            "{what}: {} problem(s)\n{}",
            self.0.len(),
            self.0.join("\n")
        );
    }
}

/// Checks a relative link (`docs/x.md#anchor`, `crates/…/`) from the markdown file `from`.
fn check_link(p: &mut Problems, from: &str, n: usize, target: &str, line: &str) {
    if target.is_empty()
        || target.contains("://")
        || target.starts_with("mailto:")
        || target.starts_with('<')
    {
        return;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let dir = Path::new(from).parent().unwrap_or(Path::new(""));
    let file = if path.is_empty() {
        repo().join(from)
    } else {
        repo().join(dir).join(path)
    };
    if !file.exists() {
        p.add(from, n, format!("link to `{target}`: no such path"), line);
        return;
    }
    if let Some(anchor) = anchor {
        if file.extension().is_some_and(|e| e == "md") {
            let text = std::fs::read_to_string(&file).unwrap();
            if !anchors(&text).contains(anchor) {
                p.add(
                    from,
                    n,
                    format!("link to `{target}`: no heading makes `#{anchor}`"),
                    line,
                );
            }
        }
    }
}

/// One `taskpools` invocation found in a command: its subcommand and the long flags after it.
#[derive(Debug)]
struct Invocation {
    sub: String,
    flags: Vec<String>,
}

fn is_subcommand_word(s: &str) -> bool {
    let mut c = s.chars();
    c.next().is_some_and(|c| c.is_ascii_lowercase())
        && c.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

/// The long flags among `tokens`, up to a shell operator, without `=value`.
fn flags_in(tokens: &[&str]) -> Vec<String> {
    tokens
        .iter()
        .take_while(|t| !matches!(**t, "|" | "||" | "&&" | ";" | ">" | "2>&1"))
        .filter(|t| t.starts_with("--") && t.len() > 2)
        .map(|t| t.split('=').next().unwrap().to_string())
        .collect()
}

/// The `taskpools` invocations of one command: `cargo run … -p taskpools-bench -- SUB …`,
/// `taskpools SUB …` and `…/release/taskpools SUB …` (under `mpirun`, say). `Err` for a
/// `cargo run` of the workbench that names no subcommand.
fn invocations(cmd: &str) -> Result<Vec<Invocation>, String> {
    let t: Vec<&str> = cmd.split_whitespace().collect();
    let mut out = Vec::new();
    if t.windows(2).any(|w| w == ["cargo", "run"]) {
        let package = t
            .windows(2)
            .find(|w| w[0] == "-p" || w[0] == "--package")
            .map(|w| w[1]);
        if package == Some("taskpools-bench") {
            let Some(dd) = t.iter().position(|x| *x == "--") else {
                return Err("`cargo run` of the workbench without `-- SUBCOMMAND`".into());
            };
            let Some(sub) = t.get(dd + 1) else {
                return Err("`cargo run` of the workbench without a subcommand".into());
            };
            out.push(Invocation {
                sub: sub.to_string(),
                flags: flags_in(&t[dd + 2..]),
            });
        }
        return Ok(out);
    }
    for i in 0..t.len() {
        let tok = t[i];
        let binary = tok == "taskpools"
            || tok.ends_with("/release/taskpools")
            || tok.ends_with("/debug/taskpools");
        let package_name = i > 0 && matches!(t[i - 1], "-p" | "--package" | "add");
        if !binary || package_name {
            continue;
        }
        if let Some(sub) = t.get(i + 1).filter(|s| is_subcommand_word(s)) {
            out.push(Invocation {
                sub: sub.to_string(),
                flags: flags_in(&t[i + 2..]),
            });
        }
    }
    Ok(out)
}

/// `taskpools SUB --help` of the built binary, cached; `None` if there is no such subcommand.
struct Helps(BTreeMap<String, Option<String>>);

impl Helps {
    fn of(&mut self, sub: &str) -> Option<&str> {
        self.0
            .entry(sub.to_string())
            .or_insert_with(|| {
                let out = Command::new(env!("CARGO_BIN_EXE_taskpools"))
                    .args([sub, "--help"])
                    .output()
                    .expect("run taskpools");
                out.status
                    .success()
                    .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
            })
            .as_deref()
    }

    /// Every subcommand of `taskpools --help`.
    fn all_subcommands() -> Vec<String> {
        let out = Command::new(env!("CARGO_BIN_EXE_taskpools"))
            .arg("--help")
            .output()
            .expect("run taskpools --help");
        let help = String::from_utf8_lossy(&out.stdout).into_owned();
        help.split("Commands:")
            .nth(1)
            .expect("a Commands: section in taskpools --help")
            .split("Options:")
            .next()
            .unwrap()
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .filter(|w| *w != "help")
            .map(str::to_string)
            .collect()
    }
}

/// Whether `help` lists the long flag `flag` (followed by a space, `=`, `,` or line end).
fn lists_flag(help: &str, flag: &str) -> bool {
    help.match_indices(flag).any(|(i, _)| {
        let next = help[i + flag.len()..].chars().next();
        let prev = help[..i].chars().next_back();
        !prev.is_some_and(|c| c.is_alphanumeric() || c == '-')
            && !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

/// Repository paths named in code: words starting with `docs/`, `scripts/`, `crates/` or
/// `.ci/`, without surrounding punctuation.
fn repo_paths(code: &str) -> Vec<&str> {
    code.split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | ','))
        .map(|w| w.trim_end_matches([':', ';', '.']))
        .filter(|w| {
            ["docs/", "scripts/", "crates/", ".ci/"]
                .iter()
                .any(|p| w.starts_with(p))
        })
        .collect()
}

const SHELL: [&str; 6] = ["sh", "bash", "shell", "console", "text", ""];

#[test]
fn readme_shows_only_commands_flags_examples_and_paths_that_exist() {
    let readme = read("README.md");
    let mut p = Problems::default();
    let mut helps = Helps(BTreeMap::new());
    let mut any_flag: Option<String> = None; // every subcommand's help, for flags shown alone
    let mut checked = 0;

    for (n, line, fence) in lines_of(&readme) {
        // The commands of this line: a shell block's line (less its prompt and comment), or
        // the prose line's code spans.
        let commands: Vec<&str> = match &fence {
            Some(info) if SHELL.contains(&info.as_str()) => {
                let l = line.trim().trim_start_matches("$ ");
                vec![l.split(" #").next().unwrap()]
            }
            Some(_) => continue,
            None => {
                for target in link_targets(line) {
                    check_link(&mut p, "README.md", n, target, line);
                }
                code_spans(line)
            }
        };
        for cmd in commands {
            for path in repo_paths(cmd) {
                if !repo().join(path).exists() {
                    p.add("README.md", n, format!("`{path}`: no such path"), line);
                }
            }
            let t: Vec<&str> = cmd.split_whitespace().collect();
            if let Some(w) = t.windows(2).find(|w| w[0] == "--example") {
                let f = format!("crates/taskpools/examples/{}.rs", w[1]);
                if !repo().join(&f).exists() {
                    p.add(
                        "README.md",
                        n,
                        format!("`--example {}`: no {f}", w[1]),
                        line,
                    );
                }
            }
            let inv = match invocations(cmd) {
                Ok(inv) => inv,
                Err(e) => {
                    p.add("README.md", n, e, line);
                    continue;
                }
            };
            if inv.is_empty() && t.first().is_some_and(|w| w.starts_with("--")) && fence.is_none() {
                // A flag shown on its own (`--trace FILE`): some subcommand must take it.
                let all = any_flag.get_or_insert_with(|| {
                    Helps::all_subcommands()
                        .iter()
                        .filter_map(|s| helps.of(s).map(str::to_string))
                        .collect::<Vec<_>>()
                        .join("\n")
                });
                let flag = t[0].split('=').next().unwrap();
                if !lists_flag(all, flag) {
                    p.add(
                        "README.md",
                        n,
                        format!("`{flag}`: no subcommand takes it"),
                        line,
                    );
                }
                checked += 1;
            }
            for Invocation { sub, flags } in inv {
                checked += 1;
                let Some(help) = helps.of(&sub) else {
                    p.add(
                        "README.md",
                        n,
                        format!("`taskpools {sub}`: no such subcommand"),
                        line,
                    );
                    continue;
                };
                for flag in flags {
                    if !lists_flag(help, &flag) {
                        p.add(
                            "README.md",
                            n,
                            format!("`{flag}`: not in `taskpools {sub} --help`"),
                            line,
                        );
                    }
                }
            }
        }
    }
    assert!(
        checked >= 10,
        "only {checked} commands found: is the parser still right?"
    );
    p.check("README.md names what does not exist");
}

#[test]
fn the_two_commands_come_first_and_are_what_ci_runs() {
    let readme = read("README.md");
    let first = readme
        .split("\n## ")
        .nth(1)
        .expect("a first ## section in the README");
    assert!(
        first.starts_with("The two commands"),
        "README's first section is not \"The two commands\": ## {}",
        first.lines().next().unwrap()
    );
    for cmd in [TOUR, TEST] {
        assert!(
            first.contains(&format!("`{cmd}`")),
            "README's first section lost `{cmd}`"
        );
    }
    let ci = read(".ci/run");
    assert_eq!(
        ci.lines().rev().find(|l| !l.trim().is_empty()),
        Some(TEST),
        ".ci/run's last command is not the README's test command"
    );
}

#[test]
fn readme_stays_a_short_guide() {
    let n = read("README.md").lines().count();
    assert!(
        n <= MAX_LINES,
        "README.md has {n} lines; at most {MAX_LINES}: move details to docs/"
    );
}

#[test]
fn public_text_names_papers_not_seeds() {
    let mut p = Problems::default();
    let readme = read("README.md");
    for (i, line) in readme.lines().enumerate() {
        let l = line.to_lowercase();
        if l.contains("seed") || l.contains("the talk") {
            p.add(
                "README.md",
                i + 1,
                "says 'seed' or 'the talk': name the paper and its authors",
                line,
            );
        }
    }
    for file in docs() {
        for (i, line) in read(&file).lines().enumerate() {
            let l = line.to_lowercase();
            let numbered_seed = l.match_indices("seed").any(|(j, _)| {
                l[j + 4..]
                    .trim_start_matches([' ', '-', '_', '#'])
                    .starts_with(|c: char| c.is_ascii_digit())
            });
            if numbered_seed || l.contains("the talk") || l.contains("seed paper") {
                p.add(
                    &file,
                    i + 1,
                    "says 'seed N' or 'the talk': name the paper and its authors",
                    line,
                );
            }
        }
    }
    p.check("public text names a seed instead of a paper");
}

/// `docs/*.md`, as repository paths.
fn docs() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.ends_with(".md").then(|| format!("docs/{name}"))
        })
        .collect();
    v.sort();
    v
}

#[test]
fn docs_links_exist() {
    let mut p = Problems::default();
    for file in docs() {
        let text = read(&file);
        for (n, line, fence) in lines_of(&text) {
            if fence.is_none() {
                for target in link_targets(line) {
                    check_link(&mut p, &file, n, target, line);
                }
            }
        }
    }
    p.check("a docs/ page links to what does not exist");
}

/// The parser itself, on made-up lines.
#[test]
fn parser_finds_invocations_flags_and_paths() {
    let inv =
        invocations("cargo run --release -p taskpools-bench -- suite --bench heat,lu --reps 11")
            .unwrap();
    assert_eq!(inv.len(), 1);
    assert_eq!(inv[0].sub, "suite");
    assert_eq!(inv[0].flags, ["--bench", "--reps"]);
    let inv = invocations("mpirun --bind-to none -n 2 target/release/taskpools distributed --k=24")
        .unwrap();
    assert_eq!(
        (inv[0].sub.as_str(), inv[0].flags.clone()),
        ("distributed", vec!["--k".to_string()])
    );
    assert!(
        invocations("cargo run --release -p taskpools --example queens_spread")
            .unwrap()
            .is_empty()
    );
    assert!(invocations("cargo run --release -p taskpools-bench").is_err());
    assert!(invocations("taskpools::forkjoin").unwrap().is_empty());
    assert_eq!(invocations("taskpools list").unwrap()[0].sub, "list");
    assert!(lists_flag("  --k <K>\n  --kernels <K>", "--k"));
    assert!(!lists_flag("  --kernels <K>", "--k"));
    assert_eq!(
        repo_paths("see docs/iter.md, and scripts/test.sh."),
        ["docs/iter.md", "scripts/test.sh"]
    );
    assert_eq!(
        slug("Coming from rayon: what differs, and why"),
        "coming-from-rayon-what-differs-and-why"
    );
    assert_eq!(
        slug("Work-stealing deques (Papakonstantinou, PARTEE (2015), §3.2)"),
        "work-stealing-deques-papakonstantinou-partee-2015-32"
    );
    assert_eq!(
        link_targets("[a](docs/a.md) and [b](b.md#x)"),
        ["docs/a.md", "b.md#x"]
    );
}
