//! The four lists (tools, resources, resource templates, prompts): what
//! the caller's grant reaches, one page at a time.

use rmcp::ErrorData as McpError;
use rmcp::RoleServer;
use rmcp::model::PaginatedRequestParams;
use rmcp::service::RequestContext;

use crate::pagination;
use crate::request_context::principal;
use crate::resolve::Listed;

/// The page of `entries` the request asks for, as `item` spells each one,
/// of those the request's principal (if any) may use; and the next page's
/// cursor.
pub(crate) fn page<E: Listed, I>(
    entries: &[E],
    request: Option<&PaginatedRequestParams>,
    context: &RequestContext<RoleServer>,
    item: impl Fn(&E) -> I,
) -> Result<(Vec<I>, Option<String>), McpError> {
    let principal = principal(context);
    let shown: Vec<&E> = entries
        .iter()
        .filter(|entry| principal.as_deref().is_none_or(|p| p.allows(entry.access_target())))
        .collect();
    let cursor = request.and_then(|r| r.cursor.as_deref());
    let (range, next) = pagination::page(cursor, shown.len())?;
    Ok((shown[range].iter().map(|entry| item(entry)).collect(), next))
}
