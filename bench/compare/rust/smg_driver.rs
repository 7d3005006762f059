//! lmparse's benchmark driver for SMG's `reasoning_parser` crate (bench/compare/peer_smg.py).
//!
//! Copied into the crate's `examples/` by scripts/setup_rust_peer.sh and built there; it is
//! lmparse's code, the crate is not.  Standard library only (the crate has no serde).
//!
//! Protocol on stdin/stdout: a request is one ASCII header line, then the raw bytes it
//! announces; an answer is one header line `ok ...` or `error MESSAGE`, then its raw bytes.
//!
//! - `hello` -> `ok IMPL`
//! - `load PARSER TEXT_BYTES PIECES`, then the UTF-8 text, then PIECES little-endian u32 byte
//!   lengths (the Python side cut the pieces: its chunking is the one timed) -> `ok`
//! - `stream` -> `ok NORMAL_BYTES REASONING_BYTES`, then both texts: one fresh parser fed every
//!   piece through `parse_reasoning_streaming_incremental`, its outputs concatenated
//! - `complete` -> the same shape from `detect_and_parse_reasoning` on the whole text
//! - `time stream|complete MIN_SAMPLE_S SAMPLES` -> `ok WALL_S LOOPS`: runs per sample chosen
//!   so a sample lasts MIN_SAMPLE_S, parsers created before the clock starts, the best sample's
//!   seconds per run (monotonic clock)

use std::hint::black_box;
use std::io::{self, BufRead, BufWriter, Read, Write};
use std::time::Instant;

use reasoning_parser::{ParseError, ParserFactory, ParserResult, ReasoningParser};

const MAX_LOOPS: u64 = 100_000;

struct Stream {
    parser: String,
    text: String,
    // Byte offsets of the piece ends in `text`, checked to fall on char boundaries at load.
    ends: Vec<usize>,
}

impl Stream {
    fn pieces(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let piece = &self.text[start..end];
            start = end;
            piece
        })
    }
}

fn parse_stream(parser: &mut dyn ReasoningParser, stream: &Stream) -> Result<ParserResult, ParseError> {
    let mut out = ParserResult::default();
    for piece in stream.pieces() {
        let result = parser.parse_reasoning_streaming_incremental(piece)?;
        out.normal_text.push_str(&result.normal_text);
        out.reasoning_text.push_str(&result.reasoning_text);
    }
    Ok(out)
}

// The timed work: what a server does per chunk, outputs dropped (as the Python side's `feed`).
fn run_once(parser: &mut dyn ReasoningParser, stream: &Stream, complete: bool) -> Result<(), ParseError> {
    if complete {
        black_box(parser.detect_and_parse_reasoning(&stream.text)?);
    } else {
        for piece in stream.pieces() {
            black_box(parser.parse_reasoning_streaming_incremental(piece)?);
        }
    }
    Ok(())
}

struct Driver {
    factory: ParserFactory,
    stream: Option<Stream>,
}

impl Driver {
    fn parser(&self, name: &str) -> Result<Box<dyn ReasoningParser>, String> {
        self.factory
            .registry()
            .create_parser(name)
            .ok_or_else(|| format!("unknown parser {name:?}; choose from {:?}", self.factory.list_parsers()))
    }

    fn loaded(&self) -> Result<&Stream, String> {
        self.stream.as_ref().ok_or_else(|| "no stream loaded".to_string())
    }

    fn load(&mut self, words: &[&str], input: &mut impl Read) -> Result<Vec<u8>, String> {
        let [name, text_bytes, pieces] = words else {
            return Err("usage: load PARSER TEXT_BYTES PIECES".to_string());
        };
        let text_bytes: usize = text_bytes.parse().map_err(|e| format!("TEXT_BYTES: {e}"))?;
        let pieces: usize = pieces.parse().map_err(|e| format!("PIECES: {e}"))?;
        let mut text = vec![0u8; text_bytes];
        let mut lengths = vec![0u8; pieces * 4];
        input.read_exact(&mut text).map_err(|e| e.to_string())?;
        input.read_exact(&mut lengths).map_err(|e| e.to_string())?;
        self.stream = None;
        let text = String::from_utf8(text).map_err(|e| format!("text is not UTF-8: {e}"))?;
        let mut ends = Vec::with_capacity(pieces);
        let mut end = 0usize;
        for length in lengths.chunks_exact(4) {
            end += u32::from_le_bytes(length.try_into().unwrap()) as usize;
            if end > text.len() || !text.is_char_boundary(end) {
                return Err(format!("piece end {end} is not a char boundary of the {}-byte text", text.len()));
            }
            ends.push(end);
        }
        if end != text.len() {
            return Err(format!("pieces cover {end} of {} bytes", text.len()));
        }
        self.parser(name)?;
        self.stream = Some(Stream { parser: name.to_string(), text, ends });
        Ok(b"ok\n".to_vec())
    }

    fn parse(&self, complete: bool) -> Result<Vec<u8>, String> {
        let stream = self.loaded()?;
        let mut parser = self.parser(&stream.parser)?;
        let result = if complete {
            parser.detect_and_parse_reasoning(&stream.text)
        } else {
            parse_stream(parser.as_mut(), stream)
        }
        .map_err(|e| e.to_string())?;
        let (normal, reasoning) = (result.normal_text.as_bytes(), result.reasoning_text.as_bytes());
        let mut out = format!("ok {} {}\n", normal.len(), reasoning.len()).into_bytes();
        out.extend_from_slice(normal);
        out.extend_from_slice(reasoning);
        Ok(out)
    }

    // Seconds per run of the fastest of `samples` samples of `loops` fresh parsers each.
    fn sample(&self, stream: &Stream, complete: bool, loops: u64) -> Result<f64, String> {
        let mut parsers = (0..loops).map(|_| self.parser(&stream.parser)).collect::<Result<Vec<_>, _>>()?;
        let started = Instant::now();
        for parser in parsers.iter_mut() {
            run_once(parser.as_mut(), stream, complete).map_err(|e| e.to_string())?;
        }
        Ok(started.elapsed().as_secs_f64() / loops as f64)
    }

    fn time(&self, words: &[&str]) -> Result<Vec<u8>, String> {
        let [mode, min_sample, samples] = words else {
            return Err("usage: time stream|complete MIN_SAMPLE_S SAMPLES".to_string());
        };
        let complete = match *mode {
            "stream" => false,
            "complete" => true,
            _ => return Err(format!("unknown mode {mode:?}; choose stream or complete")),
        };
        let min_sample: f64 = min_sample.parse().map_err(|e| format!("MIN_SAMPLE_S: {e}"))?;
        let samples: u32 = samples.parse().map_err(|e| format!("SAMPLES: {e}"))?;
        let stream = self.loaded()?;
        let estimate = self.sample(stream, complete, 1)?; // calibration, also warms the caches
        let loops = ((min_sample / estimate.max(1e-9)).ceil() as u64).clamp(1, MAX_LOOPS);
        let mut best = f64::INFINITY;
        for _ in 0..samples.max(1) {
            best = best.min(self.sample(stream, complete, loops)?);
        }
        Ok(format!("ok {best:e} {loops}\n").into_bytes())
    }

    fn handle(&mut self, header: &str, input: &mut impl Read) -> Result<Vec<u8>, String> {
        let words: Vec<&str> = header.split_ascii_whitespace().collect();
        match words.split_first() {
            Some((&"hello", [])) => {
                Ok(format!("ok reasoning-parser {}\n", env!("CARGO_PKG_VERSION")).into_bytes())
            }
            Some((&"load", rest)) => self.load(rest, input),
            Some((&"stream", [])) => self.parse(false),
            Some((&"complete", [])) => self.parse(true),
            Some((&"time", rest)) => self.time(rest),
            _ => Err(format!("unknown request {header:?}; choose hello, load, stream, complete or time")),
        }
    }
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut input = stdin.lock();
    let mut output = BufWriter::new(io::stdout().lock());
    let mut driver = Driver { factory: ParserFactory::new(), stream: None };
    let mut header = String::new();
    loop {
        header.clear();
        if input.read_line(&mut header)? == 0 {
            return Ok(());
        }
        let answer = driver.handle(header.trim_end(), &mut input).unwrap_or_else(|error| {
            format!("error {}\n", error.replace('\n', " ")).into_bytes()
        });
        output.write_all(&answer)?;
        output.flush()?;
    }
}
