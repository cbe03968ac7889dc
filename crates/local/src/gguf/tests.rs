use super::*;

fn every_value() -> Vec<(&'static str, Value)> {
    vec![
        ("u8", Value::U8(200)),
        ("i8", Value::I8(-100)),
        ("u16", Value::U16(60000)),
        ("i16", Value::I16(-30000)),
        ("u32", Value::U32(4_000_000_000)),
        ("i32", Value::I32(-2_000_000_000)),
        ("u64", Value::U64(u64::MAX)),
        ("i64", Value::I64(i64::MIN)),
        ("f32", Value::F32(1.5e-5)),
        ("f64", Value::F64(-2.25)),
        ("bool", Value::Bool(true)),
        ("string", Value::String("héllo".into())),
        (
            "strings",
            Value::Array(vec![Value::String("a".into()), Value::String("".into())]),
        ),
        ("ints", Value::Array(vec![Value::I32(-1), Value::I32(7)])),
        (
            "nested",
            Value::Array(vec![Value::Array(vec![Value::U8(1)]), Value::Array(vec![])]),
        ),
        ("empty", Value::Array(vec![])),
        ("general.alignment", Value::U32(32)),
    ]
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn sample_file() -> Vec<u8> {
    let a = f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = vec![7u8; 34 * 2];
    write(
        &every_value(),
        &[
            ("a", &[3, 2], TensorKind::F32, &a),
            ("b.q8", &[64], TensorKind::Q8_0, &b),
        ],
    )
}

#[test]
fn every_value_type_round_trips_through_write_and_parse() {
    let g = Gguf::parse(sample_file()).unwrap();
    assert_eq!(g.version(), 3);
    for (key, value) in every_value() {
        assert_eq!(g.get(key), Some(&value), "{key}");
    }
    assert_eq!(g.u64("u16"), Some(60000));
    assert_eq!(g.u64("i8"), None, "negative is no u64");
    assert_eq!(g.u64("u64"), Some(u64::MAX));
    assert_eq!(g.f32("f64"), Some(-2.25));
    assert_eq!(g.f32("u8"), None);
    assert_eq!(g.str("string"), Some("héllo"));
    assert_eq!(g.strings("strings"), Some(vec!["a", ""]));
    assert_eq!(g.strings("ints"), None);
    assert_eq!(g.ints("ints"), Some(vec![-1, 7]));
    assert_eq!(g.ints("empty"), Some(vec![]));
    assert_eq!(g.get("missing"), None);
}

#[test]
fn tensors_round_trip_with_names_dims_kinds_and_bytes() {
    let g = Gguf::parse(sample_file()).unwrap();
    let a = g.tensor("a").unwrap();
    assert_eq!(
        (a.name, a.dims, a.kind),
        ("a", &[3u64, 2][..], TensorKind::F32)
    );
    assert_eq!(a.data, &f32_bytes(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])[..]);
    let b = g.tensor("b.q8").unwrap();
    assert_eq!((b.kind, b.data.len()), (TensorKind::Q8_0, 68));
    assert!(b.data.iter().all(|&x| x == 7));
    let names: Vec<_> = g.tensors().map(|t| t.name).collect();
    assert_eq!(names, ["a", "b.q8"]);
    assert!(g.tensor("c").is_none());
}

#[test]
fn a_file_cut_at_any_length_is_an_error_not_a_panic() {
    let file = sample_file();
    // Every cut before the last tensor's data ends must fail (its padding is optional).
    let g = Gguf::parse(file.clone()).unwrap();
    let data_end = g.tensors.iter().map(|t| t.start + t.len).max().unwrap();
    for cut in 0..data_end {
        assert!(
            Gguf::parse(file[..cut].to_vec()).is_err(),
            "cut at {cut} parsed"
        );
    }
}

#[test]
fn garbled_bytes_give_errors_or_a_file_but_never_panic() {
    let file = sample_file();
    let mut rng = crate::testing::Rng(0x5eed);
    for _ in 0..2000 {
        let mut bad = file.clone();
        for _ in 0..3 {
            let i = (rng.next_u64() as usize) % bad.len();
            bad[i] = rng.next_u64() as u8;
        }
        let _ = Gguf::parse(bad);
    }
}

#[test]
fn bad_headers_are_named_in_the_error() {
    assert_eq!(
        Gguf::parse(b"GGML....".to_vec()).unwrap_err(),
        GgufError::NotGguf
    );
    let mut v1 = sample_file();
    v1[4] = 1;
    assert_eq!(
        Gguf::parse(v1).unwrap_err(),
        GgufError::UnsupportedVersion(1)
    );
    let mut huge = sample_file();
    huge[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        Gguf::parse(huge),
        Err(GgufError::Truncated { .. })
    ));
}

#[test]
fn an_unsupported_tensor_type_is_named() {
    let mut file = write(&[], &[("k", &[32], TensorKind::Q4_0, &[0u8; 18])]);
    // The type id sits after magic, version, counts, name, n_dims and one dim.
    let at = 4 + 4 + 8 + 8 + (8 + 1) + 4 + 8;
    assert_eq!(file[at..at + 4], 2u32.to_le_bytes());
    file[at..at + 4].copy_from_slice(&11u32.to_le_bytes());
    let err = Gguf::parse(file).unwrap_err();
    assert_eq!(err, GgufError::UnsupportedTensorType(11));
    // What the file has, and what is supported instead.
    let said = err.to_string();
    assert!(said.contains("Q3_K"), "{said}");
    assert!(said.contains("Q4_K, Q5_K, Q6_K are"), "{said}");
}

#[test]
fn alignment_from_the_metadata_is_honoured() {
    let meta = [("general.alignment", Value::U32(256))];
    let one = 1.0f32.to_le_bytes();
    let two = f32_bytes(&[2.0, 3.0]);
    let file = write(
        &meta,
        &[
            ("t", &[1], TensorKind::F32, &one),
            ("u", &[2], TensorKind::F32, &two),
        ],
    );
    let g = Gguf::parse(file).unwrap();
    for (name, data) in [("t", &one[..]), ("u", &two[..])] {
        let t = g.tensor(name).unwrap();
        let start = t.data.as_ptr() as usize - g.bytes.as_ptr() as usize;
        assert_eq!(start % 256, 0, "{name}");
        assert_eq!(t.data, data);
    }
    assert_eq!(g.tensors[1].start - g.tensors[0].start, 256);
    let bad = write(&[("general.alignment", Value::U32(48))], &[]);
    assert_eq!(Gguf::parse(bad).unwrap_err(), GgufError::BadAlignment(48));
}

#[test]
fn the_real_smollm2_file_parses_with_its_tensors() {
    let g = crate::testing::smollm2_gguf();
    assert_eq!(g.str("general.architecture"), Some("llama"));
    assert_eq!(g.u64("llama.block_count"), Some(30));
    assert_eq!(g.u64("llama.embedding_length"), Some(576));
    assert_eq!(
        g.strings("tokenizer.ggml.tokens").map(|t| t.len()),
        Some(49152)
    );
    let embd = g.tensor("token_embd.weight").unwrap();
    assert_eq!(
        (embd.kind, embd.dims),
        (TensorKind::Q8_0, &[576u64, 49152][..])
    );
    assert_eq!(
        g.tensor("blk.0.attn_q.weight").unwrap().kind,
        TensorKind::Q4_1
    );
    assert_eq!(
        g.tensor("output_norm.weight").unwrap().kind,
        TensorKind::F32
    );
    let q41 = g.tensors().filter(|t| t.kind == TensorKind::Q4_1).count();
    assert_eq!(q41, 210);
}
