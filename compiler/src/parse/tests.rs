use super::error::nearest;
use super::scan::{token_at, unclosed_comment};
use super::*;
use ccc_ir::enums::{AlgType, OpType};
use ccc_ir::spec::{Algorithm, ReduceOp};

const GOOD: &str = "Collective(
    op: AllReduce,
    dtype: Bf16,
    reduce: Add,
    count: 4194304,
    arch: Cayman,
    topology: (rank_n: 32, local_rank_n: 16),
    channels: 4,
    algorithm: Hier((intra_reduce_scatter: Ring, inter_all_reduce: SingleCycleRing, intra_all_gather: Kangaring)),
)
";

fn err(src: &str) -> ParseError {
    parse(src).unwrap_err()
}

fn lc(line: usize, col: usize) -> LineCol {
    LineCol { line, col }
}

#[test]
fn parses_a_collective() {
    let spec = parse(GOOD).unwrap();
    assert_eq!(spec.form, SpecForm::Collective);
    assert_eq!(spec.program.collectives.len(), 1);
    let c = &spec.program.collectives[0];
    assert_eq!(c.op, OpType::AllReduce);
    assert_eq!(c.reduce, Some(ReduceOp::Add));
    assert_eq!(c.topology.pod_n, 1);
    match &c.algorithm {
        Algorithm::Hier(legs) => assert_eq!(legs.inter_all_reduce, Some(AlgType::SingleCycleRing.into())),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_struct_name_is_optional() {
    let spec = parse(GOOD.trim_start_matches("Collective")).unwrap();
    assert_eq!(spec.form, SpecForm::Collective);
}

#[test]
fn implicit_some_for_root_and_groups() {
    let src = GOOD.replace("channels: 4,", "channels: 4, root: 0, groups: [[0, 1], [2, 3]],");
    let c = &parse(&src).unwrap().program.collectives[0];
    assert_eq!(c.root, Some(0));
    assert_eq!(c.groups, Some(vec![vec![0, 1], vec![2, 3]]));
}

#[test]
fn parses_a_program_after_comments_and_attributes() {
    let src = format!(
        "// a model\n/* two /* nested */ collectives */\n#![enable(implicit_some)]\n  Program(collectives: [{g}, {g}])",
        g = GOOD.trim()
    );
    let spec = parse(&src).unwrap();
    assert_eq!(spec.form, SpecForm::Program);
    assert_eq!(spec.program.collectives.len(), 2);
}

#[test]
fn detect_form_reads_the_first_token_only() {
    assert_eq!(detect_form("Program(collectives: [])"), SpecForm::Program);
    assert_eq!(detect_form("  // x\nProgram (collectives: [])"), SpecForm::Program);
    assert_eq!(detect_form("Programs(collectives: [])"), SpecForm::Collective);
    assert_eq!(detect_form("(op: AllReduce)"), SpecForm::Collective);
    assert_eq!(detect_form("/* unterminated"), SpecForm::Collective);
    assert_eq!(detect_form("#![enable(implicit_some"), SpecForm::Collective);
    assert_eq!(detect_form(""), SpecForm::Collective);
}

#[test]
fn a_wrong_struct_name_is_an_error() {
    let e = err(&GOOD.replacen("Collective", "Colective", 1));
    assert_eq!(e.kind, ParseErrorKind::WrongStructName { expected: "Collective", found: "Colective".into() });
    assert_eq!(e.span, SourceSpan { start: lc(1, 1), end: lc(1, 10) });
    assert!(e.help().is_some());
    let e = err(&GOOD.replace("topology: (", "topology: Topolgy("));
    assert!(matches!(e.kind, ParseErrorKind::WrongStructName { .. }), "{e:?}");
    // A program's collectives are checked too.
    let e = err(&format!("Program(collectives: [{}])", GOOD.replacen("Collective", "Colective", 1).trim()));
    assert_eq!(e.form, SpecForm::Program);
    assert!(matches!(e.kind, ParseErrorKind::WrongStructName { .. }), "{e:?}");
}

#[test]
fn unknown_field_spans_the_identifier() {
    let e = err(&GOOD.replace("algorithm:", "algoritm:"));
    assert_eq!(e.kind, ParseErrorKind::UnknownField { found: "algoritm".into() });
    assert_eq!(e.span, SourceSpan { start: lc(9, 5), end: lc(9, 13) });
    assert!(e.message.contains("`algorithm`"), "{}", e.message);
}

#[test]
fn unknown_variant() {
    let e = err(&GOOD.replace("op: AllReduce", "op: AllReduc"));
    assert_eq!(e.kind, ParseErrorKind::UnknownVariant { found: "AllReduc".into() });
    assert_eq!(e.span, SourceSpan { start: lc(2, 9), end: lc(2, 17) });
    // Named by the field it is for, and the name meant suggested.
    assert!(e.message.starts_with("Unexpected name `AllReduc` for `op`, expected one of `AllGather`"), "{}", e.message);
    assert_eq!(e.help().as_deref(), Some("did you mean `AllReduce`?"));
    // Case alone, a swap of two letters.
    assert_eq!(err(&GOOD.replace("dtype: Bf16", "dtype: BF16")).help().as_deref(), Some("did you mean `Bf16`?"));
    let leg = err(&GOOD.replace("inter_all_reduce: SingleCycleRing", "inter_all_reduce: SingleCylceRing"));
    assert_eq!(leg.help().as_deref(), Some("did you mean `SingleCycleRing`?"));
    // A leg lists what a leg may run: every algorithm but Hier, and Auto.
    let leg = err(&GOOD.replace("inter_all_reduce: SingleCycleRing", "inter_all_reduce: Rign"));
    assert!(
        leg.message.contains("for `algorithm.Hier.inter_all_reduce`, expected one of `Ring`, `Mesh`,"),
        "{}",
        leg.message
    );
    assert!(leg.message.ends_with(", or `Auto` instead") && !leg.message.contains("`Hier`"), "{}", leg.message);
    assert_eq!(leg.help().as_deref(), Some("did you mean `Ring`?"));
    // Nothing near, or two names equally near: no guess.
    assert_eq!(err(&GOOD.replace("op: AllReduce", "op: Gather")).help(), None);
    assert_eq!(nearest("Mash", "`Mesh`, `Mast`"), None);
    assert_eq!(nearest("Mash", "`Mesh`, `Ring`"), Some("Mesh"));
    // A misspelt field too.
    let field = err(&GOOD.replace("channels: 4", "chanels: 4"));
    assert!(field.help().is_some_and(|h| h.starts_with("did you mean `channels`?")), "{:?}", field.help());
}

#[test]
fn value_error_span_starts_on_the_token() {
    let src = GOOD.replace("count: 4194304", "count:    x");
    let e = err(&src);
    assert_eq!(e.kind, ParseErrorKind::Syntax);
    assert_eq!(e.span, SourceSpan { start: lc(5, 15), end: lc(5, 16) });
    assert_eq!(&src[e.span.byte_range(&src)], "x");
    assert_eq!(e.label(), "expected integer");
    // Across a comment and a line break too.
    let src = GOOD.replace("count: 4194304", "count: /* c */\n  \"lots\"");
    let e = err(&src);
    assert_eq!(e.span.start, lc(6, 3));
    assert_eq!(&src[e.span.byte_range(&src)], "\"lots\"");
    // A string with escapes, and one not closed on its line.
    assert_eq!(token_at(r#""a\"b" x"#), r#""a\"b""#);
    assert_eq!(token_at("\"open\nx\""), "");
    assert_eq!(token_at("-1,"), "-1");
    assert_eq!(token_at("éx€ "), "éx");
    assert_eq!(token_at("(x"), "");
}

#[test]
fn missing_comma_and_missing_field() {
    let e = err(&GOOD.replace("count: 4194304,", "count: 4194304"));
    assert_eq!(&*e.message, "Expected comma");
    assert_eq!(e.kind, ParseErrorKind::MissingComma);
    assert_eq!(e.span.start, lc(6, 5));
    let e = err(&GOOD.replace("    channels: 4,\n", ""));
    assert_eq!(e.kind, ParseErrorKind::MissingField { field: "channels", outer: Some("Collective".into()) });
    assert!(e.help().is_some());
    assert_eq!(e.span.start, lc(9, 1));
    let e = err(&GOOD.replace("rank_n: 32, ", ""));
    assert_eq!(e.kind, ParseErrorKind::MissingField { field: "rank_n", outer: Some("Topology".into()) });
    assert!(e.help().unwrap().contains("rank_n"));
}

/// A number its field cannot hold names the field and what it takes: a
/// negative or too large one (RON's "integer is out of bounds"), and a
/// fraction (RON's "expected comma" at the `.`).
#[test]
fn numbers_a_field_cannot_hold_name_the_field() {
    let e = err(&GOOD.replace("channels: 4,", "channels: -5,"));
    assert_eq!(e.kind, ParseErrorKind::IntegerOutOfBounds { field: Some("channels".into()) });
    assert_eq!(e.label(), "out of range for `channels`");
    assert_eq!(e.help().unwrap(), "`channels` takes a whole number from 1 to 32: no fraction");
    // The mark starts at the sign, not the digit after it.
    let at = GOOD.lines().position(|l| l.contains("channels: 4,")).unwrap() + 1;
    assert_eq!(e.span.start, lc(at, "    channels: ".len() + 1), "{e:?}");
    // Validation's range, not the type's: a world holds at most 1048576
    // ranks, and a rank is below that.
    let e = err(&GOOD.replace("rank_n: 32,", "rank_n: 99999999999,"));
    assert_eq!(e.help().unwrap(), "`rank_n` takes a whole number from 1 to 1048576: no fraction");
    let e = err(&GOOD.replace("channels: 4,", "channels: 4, root: -1,"));
    assert_eq!(e.help().unwrap(), "`root` takes a whole number of at most 1048575: not negative, no fraction");
    let e = err(&GOOD.replace("count: 4194304,", "count:  99999999999999999999,"));
    assert_eq!(e.kind, ParseErrorKind::IntegerOutOfBounds { field: Some("count".into()) });
    // The bytes of its dtype bound a count (validation says the number).
    assert!(e.help().unwrap().contains("of at most 2^64 - 1 bytes of its dtype"), "{:?}", e.help());
    let e = err(&GOOD.replace("count: 4194304,", "count: 4194304.5,"));
    assert_eq!(e.kind, ParseErrorKind::Fraction { field: Some("count".into()) });
    assert_eq!(&*e.message, "expected a whole number, found a fraction");
    let e = err(&GOOD.replace("channels: 4,", "channels: 4, model: (alpha_inter_ns: 1.5),"));
    assert_eq!(e.kind, ParseErrorKind::Fraction { field: Some("alpha_inter_ns".into()) });
    assert!(e.help().unwrap().contains("of at most 1000000000000"), "{:?}", e.help());
    // A missing comma after a whole number is still one.
    let e = err(&GOOD.replace("count: 4194304,", "count: 4194304"));
    assert_eq!(e.kind, ParseErrorKind::MissingComma);
}

/// `Auto(Ring)`, copied from a signature or manifest into a spec, is not
/// called a missing comma (RON's reading): the help says how a spec
/// writes it. A name that only ends in `Auto` is still a missing comma.
#[test]
fn an_auto_with_its_choice_says_how_a_spec_writes_it() {
    let e = err(&GOOD.replace("inter_all_reduce: SingleCycleRing", "inter_all_reduce: Auto(SingleCycleRing)"));
    assert_eq!(e.kind, ParseErrorKind::ChosenAuto { field: Some("inter_all_reduce".into()) });
    // Its field is named (it was none: RON finished the field's value).
    assert_eq!(e.path.as_deref(), Some("algorithm.Hier.inter_all_reduce"));
    let e = err(&GOOD.replace("algorithm: Hier((", "algorithm: Auto(Hier((").replace(")),\n)", "))),\n)"));
    assert_eq!(e.kind, ParseErrorKind::ChosenAuto { field: Some("algorithm".into()) });
    assert_eq!(e.path.as_deref(), Some("algorithm"));
    assert_eq!(&*e.message, "`Auto` takes no choice in a spec");
    assert!(e.help().unwrap().contains("a spec writes `Auto` (the cost model chooses) or the algorithm itself"));
    let e = err(&GOOD.replace("inter_all_reduce: SingleCycleRing", "inter_all_reduce: NotAuto(Ring)"));
    assert!(!matches!(e.kind, ParseErrorKind::ChosenAuto { .. }), "{e:?}");
    // With a comment before the choice, of either kind, nested too.
    for written in ["Auto /* the model */ (Ring)", "Auto // the model\n (Ring)", "Auto /* a /* b */ */(Ring)"] {
        let e = err(&GOOD.replace("inter_all_reduce: SingleCycleRing", &format!("inter_all_reduce: {written}")));
        assert_eq!(e.kind, ParseErrorKind::ChosenAuto { field: Some("inter_all_reduce".into()) }, "{written}");
    }
    let e = err(&GOOD.replace("inter_all_reduce: SingleCycleRing", "inter_all_reduce: NotAuto /* x */ (Ring)"));
    assert!(!matches!(e.kind, ParseErrorKind::ChosenAuto { .. }), "{e:?}");
}

/// What RON skips at the end of a text is trimmed: whitespace, a line
/// comment on the last line, block comments (nested), in any mix; an
/// unclosed `*/` is left.
#[test]
fn trailing_trivia_is_trimmed() {
    use super::scan::trim_trailing_trivia as trim;
    assert_eq!(trim("a: Auto  "), "a: Auto");
    assert_eq!(trim("a: Auto /* x */ "), "a: Auto");
    assert_eq!(trim("a: Auto /* x /* y */ z */\n  // note\n "), "a: Auto");
    assert_eq!(trim("a: Auto // note"), "a: Auto");
    assert_eq!(trim("x */"), "x */");
    assert_eq!(trim(""), "");
}

#[test]
fn trailing_text_and_empty_input() {
    let e = err(&format!("{GOOD} extra"));
    assert_eq!(e.kind, ParseErrorKind::TrailingCharacters);
    let e = err("");
    assert_eq!(e.span.start, lc(1, 1));
    assert_eq!(e.span.byte_range(""), 0..0);
}

#[test]
fn byte_range_counts_chars_and_clamps() {
    let src = "é€x\nab";
    let span = SourceSpan { start: lc(1, 3), end: lc(1, 4) };
    assert_eq!(&src[span.byte_range(src)], "x");
    let span = SourceSpan { start: lc(2, 1), end: lc(2, 99) };
    assert_eq!(&src[span.byte_range(src)], "ab");
    let span = SourceSpan { start: lc(1, 50), end: lc(7, 1) };
    let r = span.byte_range(src);
    assert!(src.get(r).is_some());
    let span = SourceSpan { start: lc(0, 0), end: lc(0, 0) };
    assert_eq!(span.byte_range(src), 0..0);
}

#[test]
fn never_panics_on_odd_input() {
    let samples = [
        "(",
        ")",
        "é",
        "Collective(op: \"€\u{1F600}\", count: ",
        "Program(",
        "Program(collectives: [(op: AllReduce, count: é)])",
        "/*",
        "#![",
        "\u{feff}Collective()",
        "\r\n\r\n  x",
        "Collective(op: AllReduce,\n\tdtype: Bf16,\n\tcount: -1)",
    ];
    for s in samples {
        let e = err(s);
        let r = e.span.byte_range(s);
        assert!(s.get(r).is_some(), "{s:?} {e:?}");
    }
    // Truncating a good spec at every char boundary never panics.
    for (i, _) in GOOD.char_indices() {
        let s = &GOOD[..i];
        if let Err(e) = parse(s) {
            assert!(s.get(e.span.byte_range(s)).is_some());
        }
    }
}

#[test]
fn a_leading_bom_is_skipped_and_columns_stay_right() {
    let src = format!("{BOM}{GOOD}");
    assert_eq!(parse(&src).unwrap().program, parse(GOOD).unwrap().program);
    // An error on line 1 is at the column an editor shows.
    let src = format!("{BOM}Colective(op: AllReduce)");
    let e = err(&src);
    assert_eq!(e.span, SourceSpan { start: lc(1, 1), end: lc(1, 10) });
    assert_eq!(&src[e.span.byte_range(&src)], "Colective");
    // Only a leading BOM: one elsewhere is an error.
    let e = err(&GOOD.replace("op: AllReduce", "op: \u{feff}AllReduce"));
    assert_eq!(e.span.start, lc(2, 9));
}

#[test]
fn an_unclosed_comment_is_marked_at_its_opening() {
    let src = "Collective(\n  op: AllReduce, /* never closed\n  dtype: F32,\n";
    let e = err(src);
    assert_eq!(e.kind, ParseErrorKind::UnclosedComment);
    assert_eq!(e.span, SourceSpan { start: lc(2, 18), end: lc(2, 20) });
    assert_eq!(&src[e.span.byte_range(src)], "/*");
    assert!(e.help().is_some());
    // The outer of two nested comments, after a closed one and a `//`.
    let src = "// a /* b\n/* closed */ (op: AllReduce, /* x /* y */ z\n";
    let e = err(src);
    assert_eq!(e.kind, ParseErrorKind::UnclosedComment);
    assert_eq!(e.span.start, lc(2, 30));
    // A `/*` in a string opens nothing.
    assert_eq!(unclosed_comment("\"/*\" /* x"), Some(lc(1, 6)));
    assert_eq!(unclosed_comment("/* a */ b"), None);
}

#[test]
fn long_tokens_are_quoted_as_an_excerpt_with_their_length() {
    let long = "a".repeat(1 << 20);
    for src in [
        GOOD.replace("op: AllReduce", &format!("op: {long}")),
        GOOD.replace("dtype:", &format!("{long}: 1,\n dtype:")),
        GOOD.replace("count: 4194304", &format!("count: 1{long}")),
        GOOD.replace("op: AllReduce", &format!("op: \"{long}\"")),
        GOOD.replacen("Collective", &long, 1),
    ] {
        let e = err(&src);
        assert!(e.message.len() <= MESSAGE_MAX_BYTES + 64, "{}", e.message.len());
        assert!(e.label().len() <= MESSAGE_MAX_BYTES + 64, "{}", e.label().len());
        assert!(!e.message.contains(&"a".repeat(QUOTE_MAX_CHARS + 2)), "{}", e.message);
    }
    let e = err(&GOOD.replace("op: AllReduce", &format!("op: {long}")));
    assert_eq!(e.label(), format!("unknown variant `{}…` ({} bytes)", &long[..QUOTE_MAX_CHARS], long.len()));
    assert!(e.message.contains(&format!("…` ({} bytes)", long.len())), "{}", e.message);
    assert_eq!(quote("Ring"), "`Ring`");
    assert_eq!(bound_message("short `words` stay"), "short `words` stay");
    let spaced = "a ".repeat(1 << 20);
    let bounded = bound_message(&spaced);
    assert!(bounded.len() < MESSAGE_MAX_BYTES + 64 && bounded.ends_with(&format!("({} bytes in all)", spaced.len())));
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(s in "\\PC{0,120}") {
        if let Err(e) = parse(&s) {
            proptest::prop_assert!(s.get(e.span.byte_range(&s)).is_some());
        }
    }

    #[test]
    fn edited_specs_never_panic(at in 0usize..400, cut in 0usize..6, insert in "[ -~é€\n]{0,4}") {
        let chars: Vec<char> = GOOD.chars().collect();
        let at = at.min(chars.len());
        let end = (at + cut).min(chars.len());
        let s: String = chars[..at].iter().copied().chain(insert.chars()).chain(chars[end..].iter().copied()).collect();
        if let Err(e) = parse(&s) {
            let range = e.span.byte_range(&s);
            proptest::prop_assert!(s.get(range).is_some());
            proptest::prop_assert!(e.span.start <= e.span.end);
        }
    }
}

/// Every error names the path of the field it is about, as the spec
/// writes it: in a program, under `collectives[i]`; a missing field, where
/// it belongs; a fraction, by the field before it.
#[test]
fn errors_name_the_field_path() {
    let program = |second: &str| format!("Program(collectives: [{GOOD}, {second}])");
    let cases = [
        (program(&GOOD.replace("local_rank_n: 16", "local_rank_n: 16, podn: 1")), "collectives[1].topology.podn"),
        (program(&GOOD.replace("    dtype: Bf16,\n", "")), "collectives[1].dtype"),
        (program(&GOOD.replace("count: 4194304", "count: \"4M\"")), "collectives[1].count"),
        (GOOD.replace(", local_rank_n: 16", ""), "topology.local_rank_n"),
        (GOOD.replace("count: 4194304", "count: 1.5"), "count"),
        (GOOD.replace("count: 4194304", "count: 99999999999999999999999"), "count"),
        (GOOD.replace("inter_all_reduce: SingleCycleRing", "inter_all_reduce: Rin"), "algorithm.Hier.inter_all_reduce"),
        (GOOD.replace("channels: 4,", "channels: 4, groups: [[0, 1], [2, x]],"), "groups[1][1]"),
        (GOOD.replace("channels: 4,", "channels: 4, channels: 2,"), "channels"),
        (program(&GOOD.replace("channels: 4,", "channels: 4, channels: 2,")), "collectives[1].channels"),
        (program(&GOOD.replace("count: 4194304", "count: 1.5")), "collectives[1].count"),
    ];
    for (src, path) in cases {
        assert_eq!(err(&src).path.as_deref(), Some(path), "{src}");
    }
    // Past the spec's closing parenthesis, no field is being read.
    assert_eq!(err(&format!("{GOOD} x")).path, None);
}

/// What a framework logging a `CompileError` reads: the message with where
/// it is; and a help for the mistakes RON's own words mislead on.
#[test]
fn errors_say_where_and_help_where_ron_misleads() {
    let e = err(&GOOD.replace("count: 4194304", "count: \"4M\""));
    assert_eq!(e.to_string(), "Expected integer at line 5, column 12, in `count`");
    assert_eq!(
        e.help().as_deref(),
        Some("`count` takes a whole number from 1, of at most 2^64 - 1 bytes of its dtype: no fraction")
    );
    // A model override that must be at least 1 says so (it said "not
    // negative", and 0 was then refused by validation).
    let with_model =
        |model: &str| GOOD.replace("    channels: 4,", &format!("    channels: 4,\n    model: ({model}),"));
    let help = |model: &str| err(&with_model(model)).help().unwrap_or_default();
    assert_eq!(help("dma_mbps: -5"), "`dma_mbps` takes a whole number from 1 to 1000000000000: no fraction");
    assert_eq!(help("hops_max: 1.5"), "`hops_max` takes a whole number from 1 to 1000000000000: no fraction");
    assert_eq!(
        help("alpha_inter_ns: -5"),
        "`alpha_inter_ns` takes a whole number of at most 1000000000000: not negative, no fraction"
    );
    // RON's advice, a raw identifier (`r#8`), is never a spec's.
    let e = err(&GOOD.replace("(rank_n: 32, local_rank_n: 16)", "(32, 16)"));
    assert_eq!(e.message.as_ref(), "Found `32` where a name belongs");
    assert!(e.help().is_some_and(|h| h.contains("fields are written by name")), "{:?}", e.help());
    // At the struct written by position (it had no path).
    assert_eq!(e.path.as_deref(), Some("topology"));
    // A field that takes a name lists the names, given a number, a string
    // or a parenthesized name (it said that `reduce`'s fields are written
    // by name: an enum has none).
    for (from, to, field) in [
        ("reduce: Add,", "reduce: 1,", "reduce"),
        ("dtype: Bf16,", "dtype: \"Float32\",", "dtype"),
        ("arch: Cayman,", "arch: (Cayman),", "arch"),
        ("op: AllReduce,", "op: 3,", "op"),
    ] {
        let help = err(&GOOD.replace(from, to)).help().unwrap_or_default();
        assert!(help.starts_with(&format!("`{field}` takes one of these names, written bare: ")), "{to}: {help}");
    }
    let help = err(&GOOD.replace("reduce: Add,", "reduce: 1,")).help().unwrap_or_default();
    assert!(help.ends_with("Add, Fma, Max, Min, Average"), "{help}");
    // A name in quotes: the string named (RON said `Expected identifier`),
    // the name to write bare, or the one it is nearest.
    for (from, to, message, help) in [
        (
            "dtype: Bf16,",
            "dtype: \"F32\",",
            "Found the string `\"F32\"` where a name belongs",
            "a name is written bare, without quotes: `dtype: F32`",
        ),
        (
            "op: AllReduce,",
            "op: \"allreduse\",",
            "Found the string `\"allreduse\"` where a name belongs",
            "a name is written bare, without quotes; did you mean `op: AllReduce`?",
        ),
        (
            "inter_all_reduce: SingleCycleRing",
            "inter_all_reduce: \"Ring\"",
            "Found the string `\"Ring\"` where a name belongs",
            "a name is written bare, without quotes: `inter_all_reduce: Ring`",
        ),
    ] {
        let e = err(&GOOD.replace(from, to));
        assert_eq!((e.message.as_ref(), e.help().unwrap_or_default().as_str()), (message, help), "{to}");
        assert_eq!(e.label(), format!("f{}", &message[1..]), "{to}");
    }
    // A number in a list names the list's field and its range (it said
    // "this field takes a whole number: not negative, no fraction", even
    // for a number too large).
    for (list, field) in [
        ("groups: [[0, 1, 2, -3]],", "groups"),
        ("groups: [[0, 99999999999]],", "groups"),
        ("peers: [(0, -1)],", "peers"),
    ] {
        let e = err(&GOOD.replace("    channels: 4,", &format!("    channels: 4,\n    {list}")));
        let help = e.help().unwrap_or_default();
        assert_eq!(
            help,
            format!("`{field}` takes a whole number of at most 1048575: not negative, no fraction"),
            "{list}"
        );
    }
    // A name given parentheses: no comma is missing, the name takes none.
    // Its field is named (it was none: RON finished the field's value).
    for (from, to, name, field) in [
        (
            "algorithm: Hier((intra_reduce_scatter: Ring",
            "algorithm: Hier((intra_reduce_scatter: Ring()",
            "Ring",
            "intra_reduce_scatter",
        ),
        ("reduce: Add,", "reduce: Add(1),", "Add", "reduce"),
        ("dtype: Bf16,", "dtype: Bf16(),", "Bf16", "dtype"),
    ] {
        let e = err(&GOOD.replace(from, to));
        assert_eq!(e.kind, ParseErrorKind::NameTakesNoValue { name: name.into(), field: Some(field.into()) }, "{to}");
        assert!(e.path.as_deref().is_some_and(|p| p.ends_with(field)), "{to}: {:?}", e.path);
        assert_eq!(e.label(), format!("`{name}` takes nothing in parentheses"));
        assert_eq!(e.help().unwrap_or_default(), format!("a name is written bare: `{name}`, without the parentheses"));
    }
    // A real missing comma stays one.
    assert_eq!(err(&GOOD.replace("reduce: Add,", "reduce: Add")).kind, ParseErrorKind::MissingComma);
    // A control character, invisible, is named where RON stopped at it
    // (a NUL in a number read as a missing comma; a C1 character before
    // one as a missing integer, shown as a space).
    for (to, c) in [("count: 41\u{0}94304,", "\\u{0}"), ("count: \u{9b}4194304,", "\\u{9b}")] {
        let e = err(&GOOD.replace("count: 4194304,", to));
        assert_eq!(e.message.as_ref(), format!("found the control character `{c}`, invisible in most editors"));
        assert!(e.help().is_some_and(|h| h.starts_with("delete it")), "{e:?}");
    }
    // A list of lists left open: its `]` is missing (it said `expected
    // opening `[``, at the collective's `)`).
    let e = err(&GOOD.replace("    channels: 4,", "    channels: 4,\n    groups: [[0, 1], [2, 3],\n"));
    assert!(e.message.ends_with("a `]` is missing before it, closing the list"), "{e:?}");
    assert_eq!(
        e.message.as_ref(),
        "found `algorithm:` where `groups` goes on: a `]` is missing before it, closing the list"
    );
    let e = err(&GOOD.replace("    algorithm: Hier((intra_reduce_scatter: Ring, inter_all_reduce: SingleCycleRing, intra_all_gather: Kangaring)),\n", "    groups: [[0, 1], [2, 3],\n"));
    assert_eq!(e.message.as_ref(), "found `)` where `groups` goes on: a `]` is missing before it, closing the list");
    // A positional spec: its first value is read as a field name, and is
    // said to be a value (it was "did you mean `reduce`?").
    let e = err("(AllReduce, F32, Add, 1048576)");
    assert_eq!(
        e.help().as_deref(),
        Some("`AllReduce` is a value of `op`: a spec's fields are written by name, `op: AllReduce`")
    );
    // In a program's collective too; not inside a nested struct, whose
    // fields are not the collective's (`topology: (Cayman, 16)` is no
    // `arch: Cayman`).
    let e = err("Program(collectives: [(AllReduce, F32)])");
    assert!(e.help().is_some_and(|h| h.starts_with("`AllReduce` is a value of `op`")), "{e:?}");
    for (from, to) in [
        ("topology: (rank_n: 32, local_rank_n: 16)", "topology: (Cayman, 16)"),
        ("channels: 4,", "channels: 4, model: (Max, 3),"),
    ] {
        let e = err(&GOOD.replace(from, to));
        assert!(!e.help().unwrap_or_default().contains("is a value of"), "{to}: {e:?}");
    }
    // Two collectives one after the other, or a bare list of them: each
    // is pointed to a program (neither had any help).
    let e = err(&format!("{GOOD}{GOOD}"));
    assert_eq!(e.kind, ParseErrorKind::TrailingCharacters);
    assert!(e.help().is_some_and(|h| h.contains("several collectives are one program")), "{e:?}");
    let e = err(&format!("[{}]", GOOD.trim_end()));
    assert!(e.help().is_some_and(|h| h.contains("a list of collectives is a program")), "{e:?}");
    // `Hier((...))` as a leg's choice: not a missing comma (it said so,
    // pointing at the `(`), a leg that cannot itself be Hier.
    let e = err(&GOOD.replace("inter_all_reduce: SingleCycleRing", "inter_all_reduce: Hier(())"));
    assert_eq!(e.kind, ParseErrorKind::HierInLeg { leg: "inter_all_reduce".into() });
    assert_eq!(e.message.as_ref(), "`inter_all_reduce: Hier(...)`: a leg cannot itself be Hier");
    assert!(e.path.as_deref().is_some_and(|p| p.ends_with("inter_all_reduce")), "{:?}", e.path);
    assert!(
        e.help().is_some_and(|h| h.starts_with("`inter_all_reduce` takes one of these names, written bare: Ring,"))
    );
    // A leg's own name ending in `Hier` (none does) is no such case, nor
    // is the whole algorithm's `Hier((...))`.
    assert_eq!(err(&GOOD.replace("reduce: Add,", "reduce: Add")).kind, ParseErrorKind::MissingComma);
    // `#` is no comment in RON, at the top or inside; a nameless program
    // is read as a collective, and says how a program is written.
    for text in [format!("# a comment\n{GOOD}"), GOOD.replace("    channels: 4,", "    channels: 4, # four")] {
        let e = err(&text);
        assert_eq!(e.message.as_ref(), "found `#`, which starts no comment in RON", "{text}");
        assert!(e.help().is_some_and(|h| h.starts_with("RON's comments are `// ...`")), "{e:?}");
    }
    let help = err("(collectives: [])").help().unwrap_or_default();
    assert!(help.starts_with("a program is written with its name, `Program(collectives: [...])`"), "{help}");
    // A Hier's legs and a `model:` block are named as a spec writes them,
    // not by their Rust types (`HierLegs`, `ModelOverrides`), and say how
    // they are written.
    let one_paren = GOOD.replace("Hier((", "Hier(").replace("Kangaring))", "Kangaring)");
    let e = err(&one_paren);
    assert_eq!(e.message.as_ref(), "Expected `Hier((...))` but found `intra_reduce_scatter`");
    assert_eq!(e.label(), "expected `Hier((...))` here");
    assert!(e.help().is_some_and(|h| h.starts_with("a Hier takes its legs by name in two parentheses")), "{e:?}");
    let e = err(&GOOD.replace("    channels: 4,", "    channels: 4,\n    model: 5,"));
    assert_eq!(e.message.as_ref(), "Expected opening `(` for `model: (...)`");
    assert!(e.help().is_some_and(|h| h.contains("`model: (launch_ns: 20000)`")), "{e:?}");
    // A spec that stops before its last `)`: the bracket left open is
    // named where it starts, and the end is marked on the last character,
    // with or without a comma after the last value (without one it said
    // "a `,` is missing before this" at that value).
    let cut = GOOD.trim_end().strip_suffix(')').unwrap().trim_end().to_owned();
    for text in [cut.clone(), cut.trim_end_matches(',').to_owned(), format!("{}\n\n", cut.trim_end_matches(','))] {
        let e = err(&text);
        assert_eq!(e.kind, ParseErrorKind::UnexpectedEof, "{text:?}");
        assert_eq!(e.message.as_ref(), "the text ends before `Collective(` at line 1, column 1 is closed");
        let last_line = text.trim_end().lines().count();
        let last_col = text.trim_end().lines().last().unwrap().chars().count();
        assert_eq!((e.span.start, e.span.end), (lc(last_line, last_col), lc(last_line, last_col + 1)), "{text:?}");
    }
    // Inside a program: the innermost one.
    let e = err("Program(collectives: [Collective(op: AllReduce");
    assert_eq!(e.message.as_ref(), "the text ends before `Collective(` at line 1, column 23 is closed");
    // A bracket in a comment is no bracket.
    let e = err(&format!("Program(collectives: [\n{}, // ( a comment\n", GOOD.trim_end()));
    assert_eq!(e.message.as_ref(), "the text ends before `[` at line 1, column 22 is closed");
    // Nothing but comments: empty, not "expected `(`".
    for empty in ["", "  \n// only a comment\n", "\u{feff}"] {
        let e = err(empty);
        assert_eq!((e.message.as_ref(), &e.kind), ("the spec is empty", &ParseErrorKind::UnexpectedEof), "{empty:?}");
        assert!(e.help().is_some_and(|h| h.contains("`Collective(...)`")));
    }
}

/// A value that is not a name where a name belongs (`op: "AllReduce"`,
/// text as generated code writes it; `reduce: 1`) accepts the field's
/// names, as a misspelt name's refusal lists them (it accepted nothing).
#[test]
fn a_value_where_a_name_belongs_accepts_the_fields_names() {
    let quoted = err(&GOOD.replace("op: AllReduce", "op: \"AllReduce\""));
    assert_eq!(quoted.path.as_deref(), Some("op"));
    let accepted = quoted.accepted().unwrap_or_default();
    assert!(
        accepted.starts_with("one of AllGather, AllReduce, ") && accepted.ends_with(", written bare"),
        "{accepted}"
    );
    let number = err(&GOOD.replace("reduce: Add", "reduce: 1"));
    assert_eq!(number.accepted().as_deref(), Some("one of Add, Fma, Max, Min, Average, written bare"));
}
