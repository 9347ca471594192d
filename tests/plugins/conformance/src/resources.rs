//! The resources and the resource template of the conformance suites.

use crate::Conformance;
use crate::exports::warden::plugin::resources::Guest;
use crate::media::PNG;
use crate::warden::plugin::types::{Error, ResourceBody, ResourceContents, ResourceInfo, ResourceTemplate};

const STATIC_TEXT_URI: &str = "test://static-text";
const STATIC_TEXT: &str = "This is the content of the static text resource.";
const STATIC_BINARY_URI: &str = "test://static-binary";
const WATCHED_URI: &str = "test://watched-resource";
const WATCHED_TEXT: &str = "Watched resource content";
pub(crate) const TEMPLATE: &str = "test://template/{id}/data";

/// The `{id}` of a URI that matches [`TEMPLATE`]: one non-empty path segment.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri.strip_prefix("test://template/")?.strip_suffix("/data")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// The JSON text of a templated resource, keys in the order the suite shows them.
fn template_text(id: &str) -> String {
    let string = |s: &str| serde_json::Value::from(s).to_string();
    format!(
        r#"{{"id":{},"templateTest":true,"data":{}}}"#,
        string(id),
        string(&format!("Data for ID: {id}"))
    )
}

fn info(uri: &str, name: &str, description: &str, mime_type: &str, size: usize) -> ResourceInfo {
    ResourceInfo {
        uri: uri.to_string(),
        name: name.to_string(),
        title: None,
        description: Some(description.to_string()),
        mime_type: Some(mime_type.to_string()),
        size: Some(size as u64),
    }
}

fn contents(uri: String, mime_type: &str, body: ResourceBody) -> Vec<ResourceContents> {
    vec![ResourceContents {
        uri,
        mime_type: Some(mime_type.to_string()),
        body,
    }]
}

impl Guest for Conformance {
    fn list_resources() -> Vec<ResourceInfo> {
        vec![
            info(
                STATIC_TEXT_URI,
                "static-text",
                "A static text resource.",
                "text/plain",
                STATIC_TEXT.len(),
            ),
            info(
                STATIC_BINARY_URI,
                "static-binary",
                "A static binary resource: a 1×1 PNG.",
                "image/png",
                PNG.len(),
            ),
            info(
                WATCHED_URI,
                "watched-resource",
                "A resource clients can subscribe to.",
                "text/plain",
                WATCHED_TEXT.len(),
            ),
        ]
    }

    fn list_resource_templates() -> Vec<ResourceTemplate> {
        vec![ResourceTemplate {
            uri_template: TEMPLATE.to_string(),
            name: "template-data".to_string(),
            title: None,
            description: Some("JSON data for an id, e.g. test://template/123/data.".to_string()),
            mime_type: Some("application/json".to_string()),
        }]
    }

    fn read_resource(uri: String) -> Result<Vec<ResourceContents>, Error> {
        match uri.as_str() {
            STATIC_TEXT_URI => Ok(contents(uri, "text/plain", ResourceBody::Text(STATIC_TEXT.into()))),
            STATIC_BINARY_URI => Ok(contents(uri, "image/png", ResourceBody::Blob(PNG.to_vec()))),
            WATCHED_URI => Ok(contents(uri, "text/plain", ResourceBody::Text(WATCHED_TEXT.into()))),
            _ => match template_id(&uri).map(template_text) {
                Some(text) => Ok(contents(uri, "application/json", ResourceBody::Text(text))),
                None => Err(Error::NotFound(uri)),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_id_is_one_nonempty_segment() {
        assert_eq!(template_id("test://template/123/data"), Some("123"));
        assert_eq!(template_id("test://template/abc/data"), Some("abc"));
        assert_eq!(template_id("test://template//data"), None);
        assert_eq!(template_id("test://template/1/2/data"), None);
        assert_eq!(template_id("test://template/123"), None);
        assert_eq!(template_id("test://other/123/data"), None);
    }

    #[test]
    fn template_text_is_exact() {
        assert_eq!(
            template_text("123"),
            r#"{"id":"123","templateTest":true,"data":"Data for ID: 123"}"#
        );
        let odd = template_text(r#"a"b"#);
        assert_eq!(odd, r#"{"id":"a\"b","templateTest":true,"data":"Data for ID: a\"b"}"#);
        assert!(serde_json::from_str::<serde_json::Value>(&odd).is_ok());
    }
}
