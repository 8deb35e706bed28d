//! JSON with comments, as in `wrangler.jsonc`: `//` and `/* */` comments become spaces (newlines
//! kept, so error positions stay those of the file) and trailing commas before `}` or `]` are
//! dropped; the rest is parsed as JSON. Text inside strings is never touched.

/// `text` as plain JSON.
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
            if c == '\\' {
                if let Some(escaped) = chars.next() {
                    out.push(escaped);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                chars.next();
                out.push_str("  ");
                while let Some(&next) = chars.peek() {
                    if next == '\n' {
                        break;
                    }
                    out.push(' ');
                    chars.next();
                }
            }
            ('/', Some('*')) => {
                chars.next();
                out.push_str("  ");
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
    while let Some(&c) = chars.get(i) {
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
            let next = chars.iter().skip(i + 1).find(|n| !n.is_whitespace());
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
    use serde_json::{Value, json};

    #[test]
    fn removes_comments_and_trailing_commas_outside_strings() {
        let text = r#"// head
{
  "name": "a//b", /* inline */
  "main": "src/*x*/index.js",
  "vars": { "A": "1", "B": "x,}", },
  "quote": "say \"hi\" // not a comment",
}
"#;
        let value: Value = serde_json::from_str(&to_json(text)).unwrap();
        assert_eq!(value["name"], "a//b");
        assert_eq!(value["main"], "src/*x*/index.js");
        assert_eq!(value["vars"], json!({"A": "1", "B": "x,}"}));
        assert_eq!(value["quote"], "say \"hi\" // not a comment");
    }

    #[test]
    fn keeps_line_numbers() {
        let text = "/* one\ntwo */\n{\n  \"name\": oops\n}\n";
        let err = serde_json::from_str::<Value>(&to_json(text)).unwrap_err();
        assert_eq!(err.line(), 4, "{err}");
    }

    #[test]
    fn plain_json_is_unchanged() {
        let text = r#"{"a": [1, 2], "b": {"c": "d"}}"#;
        assert_eq!(to_json(text), text);
    }
}
