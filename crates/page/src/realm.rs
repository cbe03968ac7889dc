//! `realm`: DOM objects of any window of the page. `instanceof`, which `dyn_ref` and
//! `dyn_into` ask, knows only this window's classes, and a same-origin frame's nodes
//! are its own window's: here they are told apart by what they are (a node's type, an
//! element's namespace and tag), as the DOM itself tells them.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, Node};

const XHTML: &str = "http://www.w3.org/1999/xhtml";

/// `node` as an element, when it is one.
pub(crate) fn element(node: &Node) -> Option<&Element> {
    (node.node_type() == Node::ELEMENT_NODE).then(|| node.unchecked_ref())
}

/// `node` as an owned element, when it is one.
pub(crate) fn into_element(node: Node) -> Option<Element> {
    (node.node_type() == Node::ELEMENT_NODE).then(|| node.unchecked_into())
}

/// `element` as an HTML element (not SVG or MathML).
pub(crate) fn html(element: &Element) -> Option<&HtmlElement> {
    (element.namespace_uri().as_deref() == Some(XHTML)).then(|| element.unchecked_ref())
}

/// `element` as the HTML element class of `tag` (`"input"` → `HtmlInputElement`).
pub(crate) fn tagged<'a, T: JsCast>(element: &'a Element, tag: &str) -> Option<&'a T> {
    html(element)
        .filter(|_| element.local_name() == tag)
        .map(|e| e.unchecked_ref())
}
