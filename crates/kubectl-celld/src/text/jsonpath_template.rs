//! kubectl's `-o jsonpath=TEMPLATE` for the common cases: text with `{.a.b}` expressions
//! (`{.fleets[*].name}`, `{.fleets[0].storage.bucket}`, filters such as
//! `{.fleets[?(@.ready==true)].name}`), `{range EXPR}...{end}` loops over the matches, and
//! quoted literals such as `{"\n"}` and `{"\t"}`. Several matches print separated by a space;
//! strings print raw, other values as JSON.

use jsonpath_rust::JsonPath;
use serde_json::Value;

#[derive(Debug)]
enum Node {
    Text(String),
    Expr(String),
    Range(String, Vec<Node>),
}

/// Renders `template` against `doc`.
pub fn render(template: &str, doc: &Value) -> Result<String, String> {
    let tokens = tokenize(template)?;
    let mut pos = 0;
    let nodes = parse(&tokens, &mut pos, false)?;
    let mut out = String::new();
    eval(&nodes, doc, &mut out)?;
    Ok(out)
}

#[derive(Debug)]
enum Token {
    Text(String),
    Braced(String),
}

fn tokenize(template: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            tokens.push(Token::Text(rest[..open].to_string()));
        }
        let after = &rest[open + 1..];
        let close = closing(after).ok_or_else(|| {
            format!(
                "unclosed '{{' in the jsonpath template at '{}'",
                &rest[open..]
            )
        })?;
        tokens.push(Token::Braced(after[..close].trim().to_string()));
        rest = &after[close + 1..];
    }
    if !rest.is_empty() {
        tokens.push(Token::Text(rest.to_string()));
    }
    Ok(tokens)
}

/// The index of the `}` that closes an expression, skipping quoted strings.
fn closing(s: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c == '}' => return Some(i),
            None => {}
        }
    }
    None
}

fn parse(tokens: &[Token], pos: &mut usize, in_range: bool) -> Result<Vec<Node>, String> {
    let mut nodes = Vec::new();
    while *pos < tokens.len() {
        let token = &tokens[*pos];
        *pos += 1;
        match token {
            Token::Text(t) => nodes.push(Node::Text(t.clone())),
            Token::Braced(b) if b == "end" => {
                return if in_range {
                    Ok(nodes)
                } else {
                    Err("{end} without {range ...} in the jsonpath template".to_string())
                };
            }
            Token::Braced(b) => match b.strip_prefix("range ") {
                Some(expr) => {
                    let body = parse(tokens, pos, true)?;
                    nodes.push(Node::Range(expr.trim().to_string(), body));
                }
                None => nodes.push(literal(b).map_or_else(|| Node::Expr(b.clone()), Node::Text)),
            },
        }
    }
    if in_range {
        Err("{range ...} without {end} in the jsonpath template".to_string())
    } else {
        Ok(nodes)
    }
}

/// `"text"` or `'text'` with `\n`, `\t`, `\\` and `\"` escapes.
fn literal(b: &str) -> Option<String> {
    let quote = b.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let inner = b.strip_prefix(quote)?.strip_suffix(quote)?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

fn query<'a>(expr: &str, doc: &'a Value) -> Result<Vec<&'a Value>, String> {
    let path = match expr {
        "" | "." | "@" => "$".to_string(),
        e if e.starts_with('$') => e.to_string(),
        e if e.starts_with('@') => format!("${}", &e[1..]),
        e if e.starts_with('.') || e.starts_with('[') => format!("${e}"),
        e => format!("$.{e}"),
    };
    doc.query(&path)
        .map_err(|e| format!("invalid jsonpath expression '{{{expr}}}': {e}"))
}

fn eval(nodes: &[Node], doc: &Value, out: &mut String) -> Result<(), String> {
    for node in nodes {
        match node {
            Node::Text(t) => out.push_str(t),
            Node::Expr(e) => {
                let values = query(e, doc)?;
                let parts: Vec<String> = values.into_iter().map(plain).collect();
                out.push_str(&parts.join(" "));
            }
            Node::Range(e, body) => {
                for item in query(e, doc)? {
                    eval(body, item, out)?;
                }
            }
        }
    }
    Ok(())
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expressions_ranges_and_literals() {
        let doc = json!({"fleets": [
            {"name": "web", "ready": true, "storage": {"bucket": "s3://b/web"}},
            {"name": "api", "ready": false, "storage": {"bucket": "s3://b/api"}}
        ]});
        assert_eq!(render("{.fleets[*].name}", &doc).unwrap(), "web api");
        assert_eq!(
            render(
                r#"{range .fleets[*]}{.name}{"\t"}{.ready}{"\n"}{end}"#,
                &doc
            )
            .unwrap(),
            "web\ttrue\napi\tfalse\n"
        );
        assert_eq!(
            render("first: {.fleets[0].storage.bucket}", &doc).unwrap(),
            "first: s3://b/web"
        );
        assert_eq!(
            render("{.fleets[?(@.ready == true)].name}", &doc).unwrap(),
            "web"
        );
        assert!(render("{range .fleets[*]}{.name}", &doc).is_err());
        assert!(render("{.fleets[", &doc).is_err());
    }
}
