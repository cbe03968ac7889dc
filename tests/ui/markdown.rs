//! Markdown as the interface renders it: hostile model text yields only the renderer's
//! own elements and attributes; tables, task lists and code that scrolls by keyboard; a
//! long code block streamed to its last byte.

use super::*;

/// Hostile model text: none of it may become an element or attribute outside the
/// renderer's own set.
const XSS: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)><circle/></svg>",
    "<iframe src=\"https://evil.example\"></iframe>",
    "<!-- a comment --><b>bold?</b>",
    "<a href=\"javascript:alert(1)\">click</a>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click]( javascript:alert(1) )",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    "[x](https://ok.example\" onclick=\"alert(1))",
    "![pic](javascript:alert(1))",
    "![pic\" onerror=\"alert(1)](https://img.example/p.png)",
    "[<img src=x onerror=alert(1)>](https://ok.example)",
    "**<script>alert(1)</script>**",
    "```html\n<script>alert(1)</script>\n```",
    "> <style>body{display:none}</style>",
    "- <form action=https://evil.example><input name=x></form>",
    "`<b>code</b>`",
    "<<script>script>alert(1)<</script>/script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "[a](https://ok.example)[b](mailto:ada@example.com)",
    "<div onclick=alert(1)>\n\nblock html\n\n</div>",
    "| <b>a</b> | [x](javascript:alert(1)) |\n|---|---|\n| <i>1</i> | ![i](https://x.example/i.png) |",
    "- [x] <u>done</u>\n- [ ] [y](data:text/html,x)",
    "[ref]\n\n[ref]: javascript:alert(1)",
];

fn allowed(tag: &str, attribute: &str) -> bool {
    matches!(
        (tag, attribute),
        (_, "class")
            | ("a", "href" | "target" | "rel")
            | ("ol", "start")
            | ("button", "type")
            | ("img", "src" | "alt" | "loading" | "referrerpolicy")
            | ("pre" | "div", "tabindex" | "role" | "aria-label")
            | ("span", "role" | "aria-label")
            | ("th", "scope")
    )
}

const TAGS: &[&str] = &[
    "div",
    "p",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "code",
    "blockquote",
    "ol",
    "ul",
    "li",
    "hr",
    "br",
    "strong",
    "em",
    "del",
    "a",
    "span",
    "button",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
];

#[wasm_bindgen_test]
async fn hostile_markdown_yields_only_the_renderers_own_elements_and_attributes() {
    use familiar::ui::Markdown;
    let scripts = || document().query_selector_all("script").unwrap().length();
    let scripts_before = scripts();
    for source in XSS {
        let root = mount(move || view! { <Markdown text=source.to_string() /> });
        leptos::task::tick().await;
        let all = root.query_selector_all("*").unwrap();
        for i in 0..all.length() {
            let element: web_sys::Element = all.item(i).unwrap().unchecked_into();
            let tag = element.tag_name().to_lowercase();
            assert!(TAGS.contains(&tag.as_str()), "{source:?} made <{tag}>");
            let names = element.get_attribute_names();
            for n in 0..names.length() {
                let name = names.get(n).as_string().unwrap();
                assert!(allowed(&tag, &name), "{source:?} made <{tag} {name}>");
            }
            if tag == "a" {
                let href = element.get_attribute("href").unwrap().to_lowercase();
                assert!(
                    href.starts_with("https://")
                        || href.starts_with("http://")
                        || href.starts_with("mailto:"),
                    "{source:?} made a link to {href}"
                );
                assert_eq!(
                    element.get_attribute("rel").as_deref(),
                    Some("noopener noreferrer")
                );
            }
        }
        root.remove();
    }
    assert_eq!(scripts(), scripts_before, "no script element was added");
}

#[wasm_bindgen_test]
async fn markdown_builds_tables_task_lists_and_code_that_scrolls_by_keyboard() {
    use familiar::ui::Markdown;
    let source = "| a | b |\n|:-|-:|\n| 1 | **2** |\n\n- [x] done\n- [ ] to do\n\n```rust\nfn main() {}\n```\n\nsee https://example.com and [rel](/x)";
    let root = mount(move || view! { <Markdown text=source.to_string() /> });
    leptos::task::tick().await;
    assert_eq!(texts_of(&root, "th"), ["a", "b"]);
    assert_eq!(texts_of(&root, "td.align-right strong"), ["2"]);
    assert_eq!(count(&root, ".table-scroll[tabindex='0'][aria-label]"), 1);
    assert_eq!(texts_of(&root, "li.task .task-mark"), ["☑", "☐"]);
    let pre = root.query_selector("pre").unwrap().unwrap();
    assert_eq!(pre.get_attribute("tabindex").as_deref(), Some("0"));
    assert_eq!(
        pre.get_attribute("aria-label").as_deref(),
        Some("Code: rust")
    );
    assert_eq!(texts_of(&root, "a"), ["https://example.com"]);
    assert_eq!(
        texts_of(&root, ".link-refused"),
        ["rel"],
        "a relative link is its text"
    );
    root.remove();
}

#[wasm_bindgen_test]
async fn a_long_code_block_streams_to_its_last_byte() {
    use familiar::ui::Markdown;
    let text = RwSignal::new(String::from("```\n"));
    let root = mount(move || view! { <Markdown text=text /> });
    let line = "let value = compute(input, &mut state); // a long line of code\n";
    for _ in 0..400 {
        text.update(|t| t.push_str(line));
        leptos::task::tick().await;
    }
    let expected = line.repeat(400);
    until("the whole code block", || {
        text_of(&root, "pre code") == expected
    })
    .await;
    root.remove();
}
