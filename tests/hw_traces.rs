//! Hardware agreement: replays the 600 operation sequences recorded on an
//! NVIDIA H200's PTX `mbarrier` (`tests/data/h200-sample.jsonl`, one JSON
//! object per sequence: its operations and the hardware's answers) on a fresh
//! `Barrier` each, and checks after every operation what the hardware
//! answered: `try_wait_parity(false)` and `try_wait_parity(true)`, and for
//! each arrival `try_wait` of its token. Every earlier token of the sequence
//! is re-checked as long as the contract lets it be waited on (its own phase or
//! the next), against the hardware's phase as told by its parity answers.
//!
//! Single-threaded: the hardware recorder was too. No serde (not an allowed
//! dependency): a small JSON reader for exactly this file's shape is below.

use std::panic::{catch_unwind, AssertUnwindSafe};
use syncthreads::{ArrivalToken, Barrier};

const TRACES: &str = include_str!("data/h200-sample.jsonl");

/// A JSON value, as far as this file needs: no floats, no escapes.
#[derive(Debug)]
enum Json {
    Num(i64),
    Str(String),
    Bool(bool),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn fail(&self, what: &str) -> ! {
        panic!("hw trace: {what} at byte {}", self.at)
    }

    fn skip_spaces(&mut self) {
        while self.at < self.text.len() && self.text[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    /// Consumes `c` (after spaces) if it comes next.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_spaces();
        let next = self.text.get(self.at) == Some(&c);
        if next {
            self.at += 1;
        }
        next
    }

    fn expect(&mut self, c: u8) {
        if !self.eat(c) {
            self.fail(&format!("expected `{}`", c as char));
        }
    }

    fn value(&mut self) -> Json {
        self.skip_spaces();
        match self.text.get(self.at) {
            Some(b'{') => {
                self.at += 1;
                let mut fields = Vec::new();
                if !self.eat(b'}') {
                    loop {
                        let Json::Str(key) = self.value() else {
                            self.fail("expected a key")
                        };
                        self.expect(b':');
                        fields.push((key, self.value()));
                        if self.eat(b'}') {
                            break;
                        }
                        self.expect(b',');
                    }
                }
                Json::Obj(fields)
            }
            Some(b'[') => {
                self.at += 1;
                let mut items = Vec::new();
                if !self.eat(b']') {
                    loop {
                        items.push(self.value());
                        if self.eat(b']') {
                            break;
                        }
                        self.expect(b',');
                    }
                }
                Json::Arr(items)
            }
            Some(b'"') => {
                let start = self.at + 1;
                let len = self.text[start..]
                    .iter()
                    .position(|&c| c == b'"')
                    .unwrap_or_else(|| self.fail("unterminated string"));
                let s = &self.text[start..start + len];
                if s.contains(&b'\\') {
                    self.fail("escapes are not used in the traces");
                }
                self.at = start + len + 1;
                Json::Str(String::from_utf8(s.to_vec()).unwrap())
            }
            Some(b't') if self.text[self.at..].starts_with(b"true") => {
                self.at += 4;
                Json::Bool(true)
            }
            Some(b'f') if self.text[self.at..].starts_with(b"false") => {
                self.at += 5;
                Json::Bool(false)
            }
            Some(c) if *c == b'-' || c.is_ascii_digit() => {
                let start = self.at;
                self.at += 1;
                while self.at < self.text.len() && self.text[self.at].is_ascii_digit() {
                    self.at += 1;
                }
                let digits = std::str::from_utf8(&self.text[start..self.at]).unwrap();
                Json::Num(digits.parse().unwrap_or_else(|_| self.fail("bad number")))
            }
            _ => self.fail("unexpected character"),
        }
    }
}

fn parse(line: &str) -> Json {
    let mut reader = Reader {
        text: line.as_bytes(),
        at: 0,
    };
    let value = reader.value();
    reader.skip_spaces();
    if reader.at != line.len() {
        reader.fail("trailing text");
    }
    value
}

impl Json {
    fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    fn field(&self, key: &str) -> &Json {
        self.get(key)
            .unwrap_or_else(|| panic!("hw trace: no field `{key}` in {self:?}"))
    }
    fn num(&self) -> i64 {
        match self {
            Json::Num(n) => *n,
            _ => panic!("hw trace: expected a number, found {self:?}"),
        }
    }
    fn bool(&self) -> bool {
        match self {
            Json::Bool(b) => *b,
            _ => panic!("hw trace: expected a bool, found {self:?}"),
        }
    }
    fn str(&self) -> &str {
        match self {
            Json::Str(s) => s,
            _ => panic!("hw trace: expected a string, found {self:?}"),
        }
    }
    fn arr(&self) -> &[Json] {
        match self {
            Json::Arr(items) => items,
            _ => panic!("hw trace: expected an array, found {self:?}"),
        }
    }
}

/// One operation of a trace, in the hardware's names.
#[derive(Debug, Clone, Copy)]
enum HwOp {
    Init(usize),
    Arrive(usize),
    ArriveDrop(usize),
    ExpectTx(u32),
    CompleteTx(u32),
    ArriveExpectTx(usize, u32),
    ArriveNoComplete(usize),
}

/// What the hardware answered right after an operation.
struct Obs {
    par0: bool,
    par1: bool,
    /// `mbarrier.test_wait` of the operation's token (arrive-type ops only).
    tw_tok: Option<bool>,
}

struct Trace {
    id: i64,
    mode: String,
    ops: Vec<HwOp>,
    obs: Vec<Obs>,
}

fn trace(line: &str) -> Trace {
    let json = parse(line);
    let count = |v: &Json| usize::try_from(v.num()).expect("a count");
    let tx = |v: &Json| u32::try_from(v.num()).expect("a tx count");
    let ops: Vec<HwOp> = json
        .field("ops")
        .arr()
        .iter()
        .map(|op| {
            let op = op.arr();
            match (op[0].str(), op.len()) {
                ("init", 2) => HwOp::Init(count(&op[1])),
                ("arrive", 2) => HwOp::Arrive(count(&op[1])),
                ("arrive_drop", 2) => HwOp::ArriveDrop(count(&op[1])),
                ("expect_tx", 2) => HwOp::ExpectTx(tx(&op[1])),
                ("complete_tx", 2) => HwOp::CompleteTx(tx(&op[1])),
                ("arrive_expect_tx", 3) => HwOp::ArriveExpectTx(count(&op[1]), tx(&op[2])),
                ("arrive_nc", 2) => HwOp::ArriveNoComplete(count(&op[1])),
                _ => panic!("hw trace: unknown operation {op:?}"),
            }
        })
        .collect();
    let obs: Vec<Obs> = json
        .field("obs")
        .arr()
        .iter()
        .map(|o| Obs {
            par0: o.field("par0").bool(),
            par1: o.field("par1").bool(),
            tw_tok: o.get("tw_tok").map(Json::bool),
        })
        .collect();
    let trace = Trace {
        id: json.field("id").num(),
        mode: json.field("mode").str().to_owned(),
        ops,
        obs,
    };
    assert_eq!(trace.ops.len(), trace.obs.len(), "trace {}", trace.id);
    assert!(
        matches!(trace.ops[0], HwOp::Init(_)),
        "trace {} must start with init",
        trace.id
    );
    for (i, (op, obs)) in trace.ops.iter().zip(&trace.obs).enumerate() {
        let arrives = matches!(
            op,
            HwOp::Arrive(_)
                | HwOp::ArriveDrop(_)
                | HwOp::ArriveExpectTx(..)
                | HwOp::ArriveNoComplete(_)
        );
        assert_eq!(
            obs.tw_tok.is_some(),
            arrives,
            "trace {} op {i}: a token answer exactly for arrive-type ops",
            trace.id
        );
    }
    trace
}

/// A token of the replay, with the hardware phase it belongs to (phases
/// counted from the hardware's parity answers).
struct Held {
    op: usize,
    hw_phase: u64,
    token: Token,
}

/// Replays one trace; returns the number of checks made (all, and those of
/// them that re-checked earlier tokens), and pushes one line per
/// disagreement onto `errors`.
fn replay(t: &Trace, errors: &mut Vec<String>) -> (usize, usize) {
    let mut checks = 0;
    let mut rechecks = 0;
    let mut check = |checks: &mut usize, ok: bool, what: String| {
        *checks += 1;
        if !ok {
            errors.push(format!("trace {} ({}): {what}", t.id, t.mode));
        }
    };
    let HwOp::Init(expected) = t.ops[0] else {
        unreachable!()
    };
    let barrier = Barrier::new(expected);
    let mut held: Vec<Held> = Vec::new();
    // The hardware's current phase, counted from its parity answers: a
    // fresh barrier is in phase 0 ("parity 1 completed"); one operation
    // completes at most one phase.
    let mut hw_phase = 0u64;
    for (i, (&op, obs)) in t.ops.iter().zip(&t.obs).enumerate() {
        let at = |what: &str| format!("op {i} {op:?}: {what}");
        let result = catch_unwind(AssertUnwindSafe(|| match op {
            HwOp::Init(_) => None,
            HwOp::Arrive(n) | HwOp::ArriveNoComplete(n) => Some(Token::Real(barrier.arrive_n(n))),
            HwOp::ArriveDrop(n) => {
                // The crate's arrive_and_drop_n returns no token; the
                // hardware's token of this arrival is the phase's, which a
                // parity query reads the same.
                let parity = barrier.phase_parity();
                barrier.arrive_and_drop_n(n);
                Some(Token::Parity(parity))
            }
            HwOp::ExpectTx(tx) => {
                barrier.expect_tx(tx);
                None
            }
            HwOp::CompleteTx(tx) => {
                barrier.complete_tx(tx);
                None
            }
            HwOp::ArriveExpectTx(n, tx) => Some(Token::Real(barrier.arrive_tx(n, tx))),
        }));
        let token: Option<Token> = match result {
            Ok(token) => token,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                errors.push(format!(
                    "trace {} ({}): {}; the rest of the trace is skipped",
                    t.id,
                    t.mode,
                    at(&format!("the crate panicked: {message}"))
                ));
                return (checks, rechecks);
            }
        };
        let phase_before = hw_phase;
        let hw_parity = hw_phase % 2 == 1;
        // After the op, the hardware's phase parity is the one whose
        // completion par0/par1 denies: par0 true means phase parity 1.
        if obs.par0 != hw_parity {
            hw_phase += 1;
        }
        assert!(
            obs.par0 == (hw_phase % 2 == 1) && obs.par1 != obs.par0,
            "trace {} op {i}: the hardware's parity answers are not one phase step",
            t.id
        );
        let p0 = barrier.try_wait_parity(false);
        let p1 = barrier.try_wait_parity(true);
        check(
            &mut checks,
            p0 == obs.par0,
            at(&format!(
                "try_wait_parity(false) = {p0}, hardware {}",
                obs.par0
            )),
        );
        check(
            &mut checks,
            p1 == obs.par1,
            at(&format!(
                "try_wait_parity(true) = {p1}, hardware {}",
                obs.par1
            )),
        );
        if let Some(token) = token {
            let tw = obs.tw_tok.expect("checked in trace()");
            // The token belongs to the phase the op arrived in.
            let mine = token.try_wait(&barrier);
            check(
                &mut checks,
                mine == tw,
                at(&format!("try_wait(its token) = {mine}, hardware {tw}")),
            );
            // The hardware's own answers agree with phase counting.
            assert_eq!(
                tw,
                hw_phase > phase_before,
                "trace {} op {i}: tw_tok vs the parity answers",
                t.id
            );
            held.push(Held {
                op: i,
                hw_phase: phase_before,
                token,
            });
        }
        // Earlier tokens, while the contract lets them be waited on: in their
        // own phase or the next one (older ones may alias, phase mod 4).
        held.retain(|h| hw_phase <= h.hw_phase + 1);
        for h in held.iter().filter(|h| h.op != i) {
            rechecks += 1;
            let answer = h.token.try_wait(&barrier);
            let hw = hw_phase > h.hw_phase;
            check(
                &mut checks,
                answer == hw,
                at(&format!(
                    "try_wait(token of op {}, hardware phase {}) = {answer}, hardware phase now {hw_phase}",
                    h.op, h.hw_phase
                )),
            );
        }
    }
    (checks, rechecks)
}

/// The token an arrive-type op gave: a real one, or (for `arrive_drop`,
/// which returns none in the crate) the parity of its phase, which answers
/// as a token would while the phase is current or just completed.
enum Token {
    Real(ArrivalToken),
    Parity(bool),
}

impl Token {
    fn try_wait(&self, barrier: &Barrier) -> bool {
        match self {
            Token::Real(t) => barrier.try_wait(t),
            Token::Parity(p) => barrier.try_wait_parity(*p),
        }
    }
}

#[test]
fn every_h200_trace_agrees_with_the_crate() {
    let traces: Vec<Trace> = TRACES.lines().map(trace).collect();
    // The least number of checks the file calls for: two parity answers
    // after every op, one token answer after every arrive-type op.
    let minimum: usize = traces
        .iter()
        .map(|t| 2 * t.ops.len() + t.obs.iter().filter(|o| o.tw_tok.is_some()).count())
        .sum();
    let mut errors = Vec::new();
    let (checks, rechecks) = traces
        .iter()
        .map(|t| replay(t, &mut errors))
        .fold((0, 0), |(a, b), (c, r)| (a + c, b + r));
    println!(
        "hw traces: {} sequences, {} operations, {checks} checks ({} parity and own-token answers, {rechecks} re-checks of earlier tokens), {} disagreements",
        traces.len(),
        traces.iter().map(|t| t.ops.len()).sum::<usize>(),
        checks - rechecks,
        errors.len()
    );
    for error in &errors {
        println!("  {error}");
    }
    assert!(
        errors.is_empty(),
        "{} disagreements with the H200 (listed above; first: {})",
        errors.len(),
        errors[0]
    );
    assert_eq!(traces.len(), 600, "the sample holds 600 sequences");
    assert_eq!(
        checks - rechecks,
        minimum,
        "every parity and own-token answer of the file is checked"
    );
    assert!(rechecks > 0, "earlier tokens are re-checked");
}
