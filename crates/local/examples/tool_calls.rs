//! How often the local model calls the right tool with the right arguments, on the
//! task set of issue 44 (`bench/tool_calls/tasks.json`), beside llama-cpp-python's own
//! tool handling on the same file (`bench/tool_calls/peer.py`'s answers):
//! `cargo run -p familiar-local --release --example tool_calls -- TASKS MODEL [PEER]`,
//! or `bench/tool_calls.sh`, which runs both.
//!
//! Prints each tuning task's answer (held-out tasks only with `--show-held`), then the
//! shares per tool set and split. Greedy, 4,096-token window. `--save=FILE` keeps our
//! answers; `--ours=FILE` scores kept answers instead of running the model (MODEL is
//! then not read); `--shortlist` prints the tools each tuning task is offered.

// The task set reads its files: the measure runs natively only (the workspace's wasm32
// clippy builds every example).
#[cfg(not(target_arch = "wasm32"))]
fn main() -> Result<(), Box<dyn std::error::Error>> {
    native::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::collections::BTreeMap;
    use std::time::Instant;

    use familiar_local::generate::{Engine, Message, Tool};
    use familiar_local::task_set::{Answer, Score, TaskSet, answer, tally};

    pub fn main() -> Result<(), Box<dyn std::error::Error>> {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let show_held = args.iter().any(|a| a == "--show-held");
        let option = |name: &str| {
            args.iter()
                .find_map(|a| a.strip_prefix(&format!("--{name}=")).map(str::to_owned))
        };
        let kept: Option<BTreeMap<String, Answer>> = match option("ours") {
            Some(path) => Some(serde_json::from_str(&std::fs::read_to_string(path)?)?),
            None => None,
        };
        let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
        let (Some(tasks), Some(model)) = (paths.first(), paths.get(1)) else {
            return Err("usage: tool_calls TASKS.json MODEL.gguf [PEER.json] [--show-held]".into());
        };
        let set = TaskSet::parse(&std::fs::read_to_string(tasks)?)?;
        let peer: Option<BTreeMap<String, Answer>> = match paths.get(2) {
            Some(path) => Some(serde_json::from_str(&std::fs::read_to_string(path)?)?),
            None => None,
        };
        let mut engine = match kept {
            Some(_) => None,
            None => Some(Engine::load(std::fs::read(model)?, 4096)?),
        };
        let started = Instant::now();
        let (mut ours, mut theirs) = (BTreeMap::new(), BTreeMap::new());
        let mut answers = BTreeMap::new();
        for task in &set.tasks {
            let request = set.request(task);
            if args.iter().any(|a| a == "--shortlist") && task.split == "tune" {
                println!("{:<28} offered {}", task.id, shortlist(&request));
            }
            let got = match (&mut engine, &kept) {
                (Some(engine), _) => {
                    answer(engine, &request).map_err(|e| format!("{}: {e}", task.id))?
                }
                (None, Some(kept)) => kept.get(&task.id).cloned().unwrap_or(Answer {
                    tool: None,
                    arguments: String::new(),
                    text: String::new(),
                }),
                (None, None) => return Err("no model and no kept answers".into()),
            };
            let score = task.score(&got);
            let peer_answer = peer.as_ref().and_then(|p| p.get(&task.id));
            let peer_score = peer_answer.map(|a| task.score(a)).unwrap_or_default();
            if task.split == "tune" || show_held {
                println!("{:<28} ours {} {}", task.id, marks(score), shown(&got));
                if let Some(a) = peer_answer {
                    println!("{:<28} peer {} {}", "", marks(peer_score), shown(a));
                }
            }
            ours.insert(task.id.clone(), score);
            theirs.insert(task.id.clone(), peer_score);
            answers.insert(task.id.clone(), got);
        }
        if let Some(path) = option("save") {
            std::fs::write(path, serde_json::to_string_pretty(&answers)?)?;
        }
        println!(
            "\n{} tasks in {:.1} s (ours)\n",
            set.tasks.len(),
            started.elapsed().as_secs_f64()
        );
        println!(
            "{:<6} {:<5} {:>13} {:>13}",
            "set", "split", "ours", "llama-cpp-py"
        );
        println!(
            "{:<6} {:<5} {:>13} {:>13}",
            "", "", "tool  +args", "tool  +args"
        );
        let peer_rows = tally(&set.tasks, &theirs);
        for (row, peer_row) in tally(&set.tasks, &ours).into_iter().zip(peer_rows) {
            let (name, split, tool, args, of) = row;
            let share = |n: usize| {
                if of == 0 {
                    0.0
                } else {
                    100.0 * n as f64 / of as f64
                }
            };
            let theirs = match peer {
                Some(_) => format!("{:>5.0}% {:>5.0}%", share(peer_row.2), share(peer_row.3)),
                None => "-".into(),
            };
            println!(
                "{name:<6} {split:<5} {:>5.0}% {:>5.0}%  {theirs:>13}  (of {of})",
                share(tool),
                share(args)
            );
        }
        Ok(())
    }

    /// The tools the shortlist keeps for `request`, as names.
    fn shortlist(request: &serde_json::Value) -> String {
        let tools: Vec<Tool> = serde_json::from_value(request["tools"].clone()).unwrap_or_default();
        let messages: Vec<Message> =
            serde_json::from_value(request["messages"].clone()).unwrap_or_default();
        let kept = familiar_local::shortlist::relevant(&tools, &messages);
        kept.iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn marks(score: Score) -> &'static str {
        match (score.tool, score.args) {
            (true, true) => "✓✓",
            (true, false) => "✓✗",
            _ => "✗✗",
        }
    }

    fn shown(answer: &Answer) -> String {
        match &answer.tool {
            Some(tool) => format!("{tool} {}", answer.arguments),
            None => format!(
                "text {:?}",
                answer.text.chars().take(100).collect::<String>()
            ),
        }
    }
}
