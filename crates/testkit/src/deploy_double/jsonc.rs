//! JSON with comments, as in `wrangler.jsonc`: `//` and `/* */` comments and trailing commas
//! are removed before the text is parsed as JSON. Line and column numbers of parse errors stay
//! those of the original text (comments become spaces, newlines are kept).

/// `text` with its comments replaced by spaces (newlines kept) and trailing commas removed.
pub fn to_json(text: &str) -> String {
    drop_trailing_commas(&blank_comments(text))
}

fn blank_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(escaped) = chars.next() {
                        out.push(escaped);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                out.push_str("  ");
                chars.next();
                while let Some(&next) = chars.peek() {
                    if next == '\n' {
                        break;
                    }
                    out.push(' ');
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                out.push_str("  ");
                chars.next();
                let mut last = '\0';
                for next in chars.by_ref() {
                    out.push(if next == '\n' { '\n' } else { ' ' });
                    if last == '*' && next == '/' {
                        break;
                    }
                    last = next;
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn drop_trailing_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some(&escaped) = chars.get(i + 1) {
                    out.push(escaped);
                    i += 1;
                }
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if c == ',' {
            let next = chars[i + 1..].iter().find(|n| !n.is_whitespace());
            out.push(if matches!(next, Some('}' | ']')) {
                ' '
            } else {
                c
            });
        } else {
            out.push(c);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::to_json;

    #[test]
    fn removes_comments_and_trailing_commas_but_not_string_contents() {
        let text = r#"// head
{
  "name": "a//b", /* inline */
  "main": "src/*x*/index.js",
  "flags": ["x", "y",],
  "quote": "say \"hi\" // not a comment",
}
"#;
        let value: serde_json::Value = serde_json::from_str(&to_json(text)).unwrap();
        assert_eq!(value["name"], "a//b");
        assert_eq!(value["main"], "src/*x*/index.js");
        assert_eq!(value["flags"], serde_json::json!(["x", "y"]));
        assert_eq!(value["quote"], "say \"hi\" // not a comment");
    }

    #[test]
    fn keeps_line_numbers_of_errors() {
        let text = "/* one\ntwo */\n{\n  \"name\": oops\n}\n";
        let err = serde_json::from_str::<serde_json::Value>(&to_json(text)).unwrap_err();
        assert_eq!(err.line(), 4, "{err}");
    }
}
