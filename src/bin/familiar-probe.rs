//! `familiar-probe`: look at model output the way Familiar does, from the command line.
//!
//! `familiar-probe json` reads model text on stdin and prints the extracted, repaired
//! JSON (exit 0; valid JSON comes back unchanged) or why there is none (stderr, exit 1).
//! `familiar-probe sse [--chunk N]` reads a raw chat-completions SSE stream on stdin,
//! decodes it N bytes at a time (0: all at once), prints each delta as a JSON line, and
//! ends with a line holding the assembled response or the typed error (exit 1).
//! `familiar-probe scenario FILE.json` plays a scenario (see `familiar::world::scenario`):
//! one JSON line per driver event, then `{"outcome": …, "iterations": …, "tools": …}`,
//! then `{"world": …}` with the final rows; exit 1 if the file's `expect` is not met.

use std::io::{Read, Write};
use std::process::ExitCode;

use familiar::base::json;
use familiar::llm::openai::ChatStream;
use familiar::world::scenario::{self, Scenario};
use serde_json::json;

const USAGE: &str = "usage: familiar-probe json < text\n       familiar-probe sse [--chunk N] < stream\n       familiar-probe scenario FILE.json";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [command, file] = args.as_slice()
        && command == "scenario"
    {
        return finish(probe_scenario(file));
    }
    let mut input = Vec::new();
    if let Err(error) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("familiar-probe: cannot read stdin: {error}");
        return ExitCode::FAILURE;
    }
    let result = match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["json"] => probe_json(&input),
        ["sse"] => probe_sse(&input, 0),
        ["sse", "--chunk", n] => match n.parse() {
            Ok(chunk) => probe_sse(&input, chunk),
            Err(_) => Err(format!("--chunk wants a byte count, not `{n}`")),
        },
        _ => Err(USAGE.to_owned()),
    };
    finish(result)
}

fn finish(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("familiar-probe: {message}");
            ExitCode::FAILURE
        }
    }
}

fn probe_json(input: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(input).map_err(|e| format!("the input is not UTF-8 ({e})"))?;
    let json = json::extract(text).map_err(|e| e.to_string())?;
    let mut out = std::io::stdout().lock();
    let written = if json == text {
        out.write_all(text.as_bytes())
    } else {
        writeln!(out, "{json}")
    };
    written.map_err(|e| format!("cannot write stdout: {e}"))
}

fn probe_sse(input: &[u8], chunk: usize) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    let mut lines = Vec::new();
    let mut sink = |delta| lines.push(serde_json::to_string(&delta).unwrap_or_default());
    let mut stream = ChatStream::new();
    let size = if chunk == 0 {
        input.len().max(1)
    } else {
        chunk
    };
    let fed = input
        .chunks(size)
        .try_for_each(|piece| stream.feed(piece, &mut sink));
    let result = fed.and_then(|()| stream.finish(&mut sink));
    let last = match &result {
        Ok(response) => json!({ "response": response }),
        Err(error) => json!({ "error": { "kind": error.kind(), "message": error.to_string() } }),
    };
    lines.push(last.to_string());
    for line in lines {
        writeln!(out, "{line}").map_err(|e| format!("cannot write stdout: {e}"))?;
    }
    result.map(|_| ()).map_err(|e| e.to_string())
}

fn probe_scenario(file: &str) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
    let scenario = Scenario::from_json(&text).map_err(|e| e.to_string())?;
    let report =
        futures::executor::block_on(scenario::play(&scenario)).map_err(|e| e.to_string())?;
    let mut out = std::io::stdout().lock();
    let summary = json!({
        "outcome": report.outcome,
        "iterations": report.iterations,
        "tools": report.tools,
    });
    let lines = report
        .events
        .iter()
        .map(|e| serde_json::to_string(e).unwrap_or_default())
        .chain([
            summary.to_string(),
            json!({ "world": report.world }).to_string(),
        ]);
    for line in lines {
        writeln!(out, "{line}").map_err(|e| format!("cannot write stdout: {e}"))?;
    }
    let mismatches = scenario
        .expect
        .as_ref()
        .map(|expect| report.mismatches(expect))
        .unwrap_or_default();
    if mismatches.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} did not go as expected:\n  {}",
            scenario.name,
            mismatches.join("\n  ")
        ))
    }
}
