//! Hostile GGUF files, as whoever serves the model's URL could write them: counts in
//! the billions, lengths past the end, dimensions whose product overflows, offsets
//! past the file, arrays that decode to far more memory than their bytes. Each is a
//! named error before the allocation it asks for, and none panics: in the worker a
//! panic or an out-of-memory abort kills the model.

use super::value::MAX_DEPTH;
use super::*;
use proptest::prelude::*;

/// A header written field by field, for what [`write`] never produces.
#[derive(Default)]
struct Raw(Vec<u8>);

impl Raw {
    fn header(n_tensors: u64, n_kv: u64) -> Raw {
        Raw::default().bytes(MAGIC).u32(3).u64(n_tensors).u64(n_kv)
    }

    fn bytes(mut self, b: &[u8]) -> Raw {
        self.0.extend_from_slice(b);
        self
    }

    fn u32(self, v: u32) -> Raw {
        self.bytes(&v.to_le_bytes())
    }

    fn u64(self, v: u64) -> Raw {
        self.bytes(&v.to_le_bytes())
    }

    fn str(self, s: &str) -> Raw {
        self.u64(s.len() as u64).bytes(s.as_bytes())
    }

    /// One row of the tensor table.
    fn tensor(self, name: &str, dims: &[u64], kind: u32, offset: u64) -> Raw {
        let mut r = self.str(name).u32(dims.len() as u32);
        for &d in dims {
            r = r.u64(d);
        }
        r.u32(kind).u64(offset)
    }

    /// Pads to the default alignment, then `n` bytes of tensor data.
    fn data(mut self, n: usize) -> Raw {
        self.0.resize(self.0.len().div_ceil(32) * 32 + n, 0);
        self
    }

    fn parse(self) -> Result<Gguf, GgufError> {
        Gguf::parse(self.0)
    }
}

/// A small valid file with every kind of value and tensor the reader knows.
fn tiny_valid() -> Vec<u8> {
    let strings =
        |v: &[&str]| Value::Array(v.iter().map(|s| Value::String(s.to_string())).collect());
    let meta = [
        ("general.architecture", Value::String("llama".into())),
        ("tokenizer.ggml.tokens", strings(&["a", "b", "ab"])),
        (
            "tokenizer.ggml.token_type",
            Value::Array(vec![Value::I32(1), Value::I32(1), Value::I32(3)]),
        ),
        (
            "nested",
            Value::Array(vec![Value::Array(vec![Value::U8(1)]), Value::Array(vec![])]),
        ),
        ("general.alignment", Value::U32(32)),
        ("llama.context_length", Value::U64(2048)),
    ];
    write(
        &meta,
        &[
            ("a", &[4, 2], TensorKind::F32, &[1u8; 32]),
            ("b", &[32], TensorKind::Q8_0, &[2u8; 34]),
            ("c", &[32, 1], TensorKind::Q4_0, &[3u8; 18]),
            ("d", &[2], TensorKind::F16, &[4u8; 4]),
        ],
    )
}

/// Parses within `limits`; when the file is accepted, every tensor must be readable
/// and exactly as long as its dims and kind say.
fn parse_checked(bytes: Vec<u8>, limits: Limits) -> Result<(), String> {
    let len = bytes.len();
    match Gguf::parse_within(bytes, limits) {
        Err(e) if e.to_string().is_empty() => Err("an error with no message".into()),
        Err(_) => Ok(()),
        Ok(g) => {
            if g.tensors().count() != g.tensors.len() {
                return Err("a tensor's bytes lie outside the file".into());
            }
            for t in g.tensors() {
                let elements = t.dims.iter().product::<u64>();
                if t.kind.bytes_for(elements) != Some(t.data.len() as u64) || t.data.len() > len {
                    return Err(format!("tensor {} has {} bytes", t.name, t.data.len()));
                }
            }
            Ok(())
        }
    }
}

#[test]
fn counts_in_the_billions_are_refused_as_running_past_the_end() {
    for huge in [u64::MAX, u64::MAX / 8, 1 << 40, 1 << 32, 4_000_000_000] {
        let cases = [
            ("tensor count", Raw::header(huge, 0)),
            ("metadata count", Raw::header(0, huge)),
            ("metadata key", Raw::header(0, 1).u64(huge)),
            (
                "metadata value",
                Raw::header(0, 1).str("k").u32(8).u64(huge),
            ),
            (
                "array length",
                Raw::header(0, 1).str("k").u32(9).u32(0).u64(huge),
            ),
            (
                "array length",
                Raw::header(0, 1).str("k").u32(9).u32(8).u64(huge),
            ),
            (
                "array length",
                Raw::header(0, 1).str("k").u32(9).u32(9).u64(huge),
            ),
            ("tensor name", Raw::header(1, 0).u64(huge)),
        ];
        for (what, raw) in cases {
            let err = raw.bytes(&[0; 64]).parse().unwrap_err();
            assert!(
                matches!(err, GgufError::Truncated { what: w, .. } if w == what),
                "{what} of {huge}: {err:?}"
            );
            assert!(err.to_string().contains("runs past the end"), "{err}");
        }
    }
}

#[test]
fn a_byte_array_that_would_decode_past_the_memory_budget_is_refused() {
    // Each byte of a U8 array is a whole `Value` once decoded (32 bytes here): a file
    // of a few MiB would otherwise ask for gigabytes.
    let limit = Limits::default().header_memory;
    let n = limit / size_of::<Value>() + 1024;
    let file = Raw::header(0, 1)
        .str("k")
        .u32(9)
        .u32(0)
        .u64(n as u64)
        .bytes(&vec![7; n])
        .0;
    let err = Gguf::parse(file).unwrap_err();
    assert!(
        matches!(err, GgufError::TooLarge { what: "array", .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("256 MiB of memory"), "{err}");
}

#[test]
fn the_budget_counts_strings_map_entries_names_and_nested_arrays() {
    let small = Limits {
        header_memory: 64 << 10,
        tensors: 16,
    };
    let parse = |raw: Raw| Gguf::parse_within(raw.0, small);
    let too_large = |r: Result<Gguf, GgufError>| match r {
        Err(GgufError::TooLarge { what, .. }) => what,
        other => panic!("expected TooLarge, got {other:?}"),
    };
    let long = "x".repeat(100 << 10);
    let string = Raw::header(0, 1).str("k").u32(8).str(&long);
    assert_eq!(too_large(parse(string)), "metadata value");
    let key = Raw::header(0, 1).str(&long).u32(0).bytes(&[1]);
    assert_eq!(too_large(parse(key)), "metadata key");
    let mut entries = Raw::header(0, 5000);
    for i in 0..5000 {
        entries = entries.str(&i.to_string()).u32(0).bytes(&[1]);
    }
    assert_eq!(too_large(parse(entries)), "metadata count");
    // 10,000 empty arrays inside one: 12 bytes each in the file.
    let mut nested = Raw::header(0, 1).str("k").u32(9).u32(9).u64(10_000);
    for _ in 0..10_000 {
        nested = nested.u32(0).u64(0);
    }
    assert_eq!(too_large(parse(nested)), "array");
    let name = Raw::header(1, 0).tensor(&long, &[1], 0, 0).data(4);
    assert_eq!(too_large(parse(name)), "tensor name");
    // What real files hold fits easily.
    assert!(Gguf::parse_within(tiny_valid(), small).is_ok());
}

#[test]
fn more_tensors_than_any_model_has_are_refused_before_the_table_is_built() {
    // 70,000 empty tensors: 2 MB of table, every row of it valid on its own.
    let n = 70_000u64;
    let mut raw = Raw::header(n, 0);
    for i in 0..n {
        raw = raw.tensor(&i.to_string(), &[0], 0, 0);
    }
    let err = raw.data(0).parse().unwrap_err();
    assert_eq!(
        err,
        GgufError::TooManyTensors {
            count: n,
            limit: 1 << 16
        }
    );
    assert!(err.to_string().contains("70000 tensors"), "{err}");
}

#[test]
fn dimensions_whose_product_or_byte_size_overflows_are_refused() {
    let cases: [(&[u64], u32, &str); 6] = [
        (&[1 << 32, 1 << 32, 1 << 32], 0, "element count overflows"),
        (&[u64::MAX, 2], 0, "element count overflows"),
        (&[1 << 62, 4], 1, "element count overflows"),
        (&[1 << 62], 0, "byte size overflows"),
        (&[u64::MAX - 31], 8, "byte size overflows"),
        (&[33], 8, "row length is not a whole number of blocks"),
    ];
    for (dims, kind, reason) in cases {
        let err = Raw::header(1, 0)
            .tensor("t", dims, kind, 0)
            .data(64)
            .parse()
            .unwrap_err();
        assert_eq!(
            err,
            GgufError::BadTensor {
                name: "t".into(),
                reason
            },
            "{dims:?}"
        );
    }
    let five = Raw::header(1, 0)
        .tensor("t", &[1, 1, 1, 1, 1], 0, 0)
        .data(4);
    assert!(matches!(five.parse(), Err(GgufError::BadTensor { .. })));
}

#[test]
fn tensor_data_past_the_end_of_the_file_is_refused() {
    let one = |dims: &[u64], offset: u64| Raw::header(1, 0).tensor("t", dims, 0, offset).data(32);
    let far = one(&[8], 1 << 40).parse().unwrap_err();
    assert!(
        matches!(
            far,
            GgufError::Truncated {
                what: "tensor data",
                ..
            }
        ),
        "{far:?}"
    );
    let wraps = one(&[8], !31).parse().unwrap_err();
    assert_eq!(
        wraps,
        GgufError::BadTensor {
            name: "t".into(),
            reason: "offset overflows"
        }
    );
    // 9 floats are 36 bytes; the file holds 32 after the table.
    let long = one(&[9], 0).parse().unwrap_err();
    assert!(
        matches!(
            long,
            GgufError::Truncated {
                what: "tensor data",
                ..
            }
        ),
        "{long:?}"
    );
    let huge = one(&[1 << 40], 0).parse().unwrap_err();
    assert!(
        matches!(
            huge,
            GgufError::Truncated {
                what: "tensor data",
                ..
            }
        ),
        "{huge:?}"
    );
    assert!(
        one(&[8], 0).parse().is_ok(),
        "the same file, honest, parses"
    );
}

#[test]
fn arrays_nested_deeper_than_any_real_file_are_refused_by_name() {
    let nested = |levels: u32| {
        let mut r = Raw::header(0, 1).str("k").u32(9);
        for _ in 1..levels {
            r = r.u32(9).u64(1);
        }
        r.u32(0).u64(0).parse()
    };
    assert!(nested(MAX_DEPTH).is_ok());
    let err = nested(MAX_DEPTH + 1).unwrap_err();
    assert!(matches!(err, GgufError::TooDeep { .. }), "{err:?}");
    assert!(err.to_string().contains("nested more than 8 deep"), "{err}");
    assert!(matches!(nested(10_000), Err(GgufError::TooDeep { .. })));
}

#[test]
fn a_valid_file_cut_anywhere_in_its_header_or_data_is_an_error() {
    let file = tiny_valid();
    let g = Gguf::parse(file.clone()).unwrap();
    let end = g.tensors.iter().map(|t| t.start + t.len).max().unwrap();
    for cut in 0..end {
        let err = Gguf::parse(file[..cut].to_vec()).unwrap_err();
        assert!(!err.to_string().is_empty(), "cut at {cut}");
    }
}

#[test]
fn random_byte_flips_of_a_valid_header_never_panic() {
    let file = tiny_valid();
    let header = Gguf::parse(file.clone()).unwrap().tensors[0].start;
    let mut rng = crate::testing::Rng(0xbad_5eed);
    let limits = [
        Limits::default(),
        Limits {
            header_memory: 1024,
            tensors: 2,
        },
    ];
    for round in 0..20_000 {
        let mut bad = file.clone();
        for _ in 0..1 + rng.next_u64() % 4 {
            let i = (rng.next_u64() as usize) % header;
            bad[i] = match rng.next_u64() % 3 {
                0 => 0xff,
                1 => bad[i] ^ (1 << (rng.next_u64() % 8)),
                _ => rng.next_u64() as u8,
            };
        }
        let result = parse_checked(bad, limits[round % 2]);
        assert!(result.is_ok(), "round {round}: {result:?}");
    }
}

/// A value for a count, length, dim or offset field: the edges a hostile file picks.
fn field_value() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(u64::MAX),
        Just(u64::MAX / 2),
        Just(1u64 << 32),
        Just(1u64 << 40),
        Just(u32::MAX as u64),
        0u64..512,
        any::<u64>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn any_field_overwritten_with_an_edge_value_is_an_error_or_a_sound_file(
        at in 0usize..360,
        value in field_value(),
        wide in any::<bool>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut file = tiny_valid();
        let bytes = if wide { value.to_le_bytes().to_vec() } else { (value as u32).to_le_bytes().to_vec() };
        for (i, b) in bytes.into_iter().enumerate() {
            if let Some(slot) = file.get_mut(at + i) {
                *slot = b;
            }
        }
        let keep = cut.index(file.len() + 1);
        prop_assert_eq!(parse_checked(file[..keep].to_vec(), Limits::default()), Ok(()));
        prop_assert_eq!(parse_checked(file, Limits { header_memory: 512, tensors: 3 }), Ok(()));
    }

    #[test]
    fn random_edits_and_truncations_are_an_error_or_a_sound_file(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..12),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut file = tiny_valid();
        let len = file.len();
        for (i, b) in edits {
            if let Some(slot) = file.get_mut(i.index(len)) {
                *slot = b;
            }
        }
        file.truncate(cut.index(len + 1));
        prop_assert_eq!(parse_checked(file, Limits::default()), Ok(()));
    }
}
