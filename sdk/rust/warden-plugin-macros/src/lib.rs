//! The attribute macros of [`warden-plugin`](https://docs.rs/warden-plugin): `#[tool]`,
//! `#[resource]` and `#[prompt]`. Use them through `warden_plugin`, which documents them.
//!
//! Each macro keeps the function as written and adds, under the same name, a struct
//! with braces (it lives in the type namespace, the function in the value namespace)
//! that describes it to `warden_plugin::export!`.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, FnArg, ItemFn, Lit, LitBool, LitStr, Meta, ReturnType, Type};

/// Turns a function into a tool. See `warden_plugin::tool`.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Tool, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Turns a function into a resource or a resource template. See `warden_plugin::resource`.
#[proc_macro_attribute]
pub fn resource(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Resource, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Turns a function into a prompt. See `warden_plugin::prompt`.
#[proc_macro_attribute]
pub fn prompt(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Prompt, attr.into(), item.into())
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Tool,
    Resource,
    Prompt,
}

/// What the attribute says.
#[derive(Default)]
struct Options {
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    /// These three may be constants (`uri = INDEX_URI`): any `&'static str` expression.
    uri: Option<Expr>,
    template: Option<Expr>,
    mime_type: Option<Expr>,
    read_only: Option<LitBool>,
    destructive: Option<LitBool>,
    idempotent: Option<LitBool>,
    open_world: Option<LitBool>,
    size: Option<LitBool>,
    /// `task = "forbidden" | "optional" | "required"`.
    task: Option<LitStr>,
}

fn allowed(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::Tool => &[
            "name",
            "title",
            "description",
            "read_only",
            "destructive",
            "idempotent",
            "open_world",
            "task",
        ],
        Kind::Resource => &["name", "title", "description", "uri", "template", "mime_type", "size"],
        Kind::Prompt => &["name", "title", "description"],
    }
}

/// What `#[tool(task = …)]` may say (the contract's `task-support`).
const TASK_SUPPORT: [&str; 3] = ["forbidden", "optional", "required"];

fn parse_options(kind: Kind, attr: Tokens) -> syn::Result<Options> {
    let mut options = Options::default();
    let parser = syn::meta::parser(|meta| {
        let key = meta.path.get_ident().map(|i| i.to_string()).unwrap_or_default();
        if !allowed(kind).contains(&key.as_str()) {
            return Err(meta.error(format!("unknown option; expected one of: {}", allowed(kind).join(", "))));
        }
        match key.as_str() {
            "read_only" | "destructive" | "idempotent" | "open_world" | "size" => {
                // `read_only` alone means `read_only = true`.
                let value = if meta.input.peek(syn::Token![=]) {
                    meta.value()?.parse::<LitBool>()?
                } else {
                    LitBool::new(true, meta.path.span())
                };
                let slot = match key.as_str() {
                    "read_only" => &mut options.read_only,
                    "destructive" => &mut options.destructive,
                    "idempotent" => &mut options.idempotent,
                    "size" => &mut options.size,
                    _ => &mut options.open_world,
                };
                *slot = Some(value);
            }
            "uri" | "template" | "mime_type" => {
                let value = meta.value()?.parse::<Expr>()?;
                let slot = match key.as_str() {
                    "uri" => &mut options.uri,
                    "template" => &mut options.template,
                    _ => &mut options.mime_type,
                };
                *slot = Some(value);
            }
            _ => {
                let value = meta.value()?.parse::<LitStr>()?;
                let slot = match key.as_str() {
                    "name" => &mut options.name,
                    "title" => &mut options.title,
                    "task" => {
                        if !TASK_SUPPORT.contains(&value.value().as_str()) {
                            return Err(syn::Error::new(
                                value.span(),
                                format!(
                                    "`task = {:?}`: write \"forbidden\", \"optional\" or \"required\"",
                                    value.value()
                                ),
                            ));
                        }
                        &mut options.task
                    }
                    _ => &mut options.description,
                };
                *slot = Some(value);
            }
        }
        Ok(())
    });
    parser.parse2(attr)?;
    Ok(options)
}

/// The doc comment as a description: lines of a paragraph joined by a space, paragraphs by
/// a blank line (the way rustdoc shows it).
fn doc_comment(function: &ItemFn) -> Option<String> {
    let mut lines = Vec::new();
    for attr in &function.attrs {
        if let Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) = &nv.value
        {
            let value = s.value();
            if value.trim().is_empty() {
                lines.push(String::new());
            }
            for line in value.lines() {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_string());
            }
        }
    }
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line.trim());
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n\n"))
}

fn option_str(value: Option<&impl quote::ToTokens>) -> Tokens {
    match value {
        Some(s) => quote!(::core::option::Option::Some::<&'static str>(#s)),
        None => quote!(::core::option::Option::None::<&'static str>),
    }
}

fn option_bool(value: Option<&LitBool>) -> Tokens {
    match value {
        Some(b) => quote!(::core::option::Option::Some::<bool>(#b)),
        None => quote!(::core::option::Option::None::<bool>),
    }
}

/// `&mut Input` (or `&mut warden_plugin::Input`, any path ending in `Input`): the call's
/// interaction, passed by the SDK rather than parsed from the arguments.
fn is_input(ty: &Type) -> bool {
    let Type::Reference(reference) = ty else {
        return false;
    };
    if reference.mutability.is_none() {
        return false;
    }
    let Type::Path(path) = &*reference.elem else {
        return false;
    };
    path.qself.is_none()
        && path
            .path
            .segments
            .last()
            .is_some_and(|segment| segment.ident == "Input" && segment.arguments.is_none())
}

fn expand(kind: Kind, attr: Tokens, item: Tokens) -> syn::Result<Tokens> {
    let options = parse_options(kind, attr)?;
    let function: ItemFn = syn::parse2(item)?;
    let ident = &function.sig.ident;
    let vis = &function.vis;
    if function.sig.asyncness.is_some() {
        return Err(syn::Error::new(
            function.sig.asyncness.span(),
            "a plugin function is synchronous: each call runs in a fresh sandbox",
        ));
    }
    if !function.sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            function.sig.generics.span(),
            "a plugin function cannot be generic",
        ));
    }
    // At most one argument struct, and at most one `&mut Input` (the call's interaction),
    // in either order.
    let mut argument: Option<Box<Type>> = None;
    let mut takes_input = false;
    let mut passed: Vec<Tokens> = Vec::new();
    for input in &function.sig.inputs {
        let typed = match input {
            FnArg::Typed(typed) => typed,
            FnArg::Receiver(r) => return Err(syn::Error::new(r.span(), "a plugin function takes no `self`")),
        };
        if is_input(&typed.ty) {
            if takes_input {
                return Err(syn::Error::new(
                    typed.span(),
                    "a plugin function takes one `&mut Input` at most",
                ));
            }
            takes_input = true;
            passed.push(quote!(__input));
        } else {
            if argument.is_some() {
                return Err(syn::Error::new(
                    function.sig.inputs.span(),
                    "a plugin function takes at most one argument: a struct deriving \
                     `serde::Deserialize` and `schemars::JsonSchema`, whose fields are its arguments \
                     (and, to ask the client for input, a `&mut warden_plugin::Input`)",
                ));
            }
            argument = Some(typed.ty.clone());
            passed.push(quote!(arguments));
        }
    }
    let output: Tokens = match &function.sig.output {
        ReturnType::Default => quote!(()),
        ReturnType::Type(_, ty) => quote!(#ty),
    };
    let name_string = ident.to_string();
    let name_string = name_string.strip_prefix("r#").unwrap_or(&name_string).to_string();
    let name = options
        .name
        .clone()
        .unwrap_or_else(|| LitStr::new(&name_string, ident.span()));
    let description = options
        .description
        .as_ref()
        .map(LitStr::value)
        .or_else(|| doc_comment(&function));
    let title = option_str(options.title.as_ref());
    let krate = quote!(::warden_plugin::__private);
    let call = match &argument {
        Some(ty) => quote!({
            let arguments: #ty = #krate::parse_arguments(arguments)?;
            #ident(#(#passed),*)
        }),
        None => quote!(#ident(#(#passed),*)),
    };
    let marker = format_ident!("{}", ident);

    let definition = match kind {
        Kind::Tool => {
            let Some(description) = description else {
                return Err(syn::Error::new(
                    ident.span(),
                    "a tool needs a description: write a doc comment (`/// What it does.`) \
                     or `#[tool(description = \"…\")]`",
                ));
            };
            let input_schema = match &argument {
                Some(ty) => quote!(#krate::input_schema::<#ty>()),
                None => quote!(#krate::empty_input_schema()),
            };
            let hints = [
                &options.read_only,
                &options.destructive,
                &options.idempotent,
                &options.open_world,
            ];
            let annotations = if hints.iter().all(|h| h.is_none()) {
                quote!(::core::option::Option::None)
            } else {
                let [read_only, destructive, idempotent, open_world] = hints.map(|h| option_bool(h.as_ref()));
                quote!(::core::option::Option::Some(::warden_plugin::ToolAnnotations {
                    title: #title.map(::std::string::String::from),
                    read_only_hint: #read_only,
                    destructive_hint: #destructive,
                    idempotent_hint: #idempotent,
                    open_world_hint: #open_world,
                }))
            };
            let task = match options.task.as_ref().map(LitStr::value).as_deref() {
                Some("forbidden") => quote!(::core::option::Option::Some(::warden_plugin::TaskSupport::Forbidden)),
                Some("optional") => quote!(::core::option::Option::Some(::warden_plugin::TaskSupport::Optional)),
                Some(_) => quote!(::core::option::Option::Some(::warden_plugin::TaskSupport::Required)),
                None => quote!(::core::option::Option::None),
            };
            quote! {
                impl #krate::ToolDef for #marker {
                    const ENTRY: #krate::ToolEntry = #krate::ToolEntry {
                        name: #name,
                        describe: || ::warden_plugin::Tool {
                            name: ::std::string::String::from(#name),
                            title: #title.map(::std::string::String::from),
                            description: ::std::string::String::from(#description),
                            input_schema: #input_schema,
                            output_schema: <#output as ::warden_plugin::IntoToolResult>::output_schema(),
                            annotations: #annotations,
                        },
                        task: #task,
                        call: |arguments, __input| ::warden_plugin::IntoToolResult::into_tool_result(#call),
                    };
                }
            }
        }
        Kind::Resource => {
            let description = option_str(description.as_ref().map(|d| LitStr::new(d, ident.span())).as_ref());
            let mime_type = option_str(options.mime_type.as_ref());
            match (&options.uri, &options.template) {
                (Some(uri), None) => {
                    if argument.is_some() {
                        return Err(syn::Error::new(
                            function.sig.inputs.span(),
                            "a resource with a fixed `uri` takes no arguments; \
                             use `template = \"…{name}…\"` for one with parameters",
                        ));
                    }
                    // `size`: the resource is read at load to tell its size in the listing.
                    let size = if options.size.as_ref().is_some_and(LitBool::value) {
                        if takes_input {
                            return Err(syn::Error::new(
                                function.sig.inputs.span(),
                                "a resource that asks for input cannot list its `size`: \
                                 it is read at load, where there is no one to ask",
                            ));
                        }
                        quote!(::warden_plugin::IntoResourceContents::size(&#ident()))
                    } else {
                        quote!(::core::option::Option::None)
                    };
                    quote! {
                        impl #krate::ResourceDef for #marker {
                            const ENTRY: #krate::ResourceEntry = #krate::ResourceEntry::Fixed {
                                uri: #uri,
                                describe: || #krate::resource_info(
                                    #uri, #name, #title, #description, #mime_type, #size,
                                ),
                                read: |uri, __input| ::warden_plugin::IntoResourceContents::into_contents(
                                    #ident(#(#passed),*), uri, #mime_type,
                                ),
                            };
                        }
                    }
                }
                (None, Some(template)) => {
                    let read = match &argument {
                        Some(ty) => quote!({
                            let arguments: #ty = #krate::parse_strings(arguments)?;
                            #ident(#(#passed),*)
                        }),
                        None => quote!(#ident(#(#passed),*)),
                    };
                    quote! {
                        impl #krate::ResourceDef for #marker {
                            const ENTRY: #krate::ResourceEntry = #krate::ResourceEntry::Template {
                                uri_template: #template,
                                describe: || ::warden_plugin::ResourceTemplate {
                                    uri_template: ::std::string::String::from(#template),
                                    name: ::std::string::String::from(#name),
                                    title: #title.map(::std::string::String::from),
                                    description: #description.map(::std::string::String::from),
                                    mime_type: #mime_type.map(::std::string::String::from),
                                },
                                read: |uri, arguments, __input| ::warden_plugin::IntoResourceContents::into_contents(#read, uri, #mime_type),
                            };
                        }
                    }
                }
                _ => {
                    return Err(syn::Error::new(
                        ident.span(),
                        "a resource needs exactly one of `uri = \"…\"` and `template = \"…{name}…\"`",
                    ));
                }
            }
        }
        Kind::Prompt => {
            let description = option_str(description.as_ref().map(|d| LitStr::new(d, ident.span())).as_ref());
            let arguments = match &argument {
                Some(ty) => quote!(#krate::prompt_arguments::<#ty>()),
                None => quote!(::std::vec::Vec::new()),
            };
            let call = match &argument {
                Some(ty) => quote!({
                    let arguments: #ty = #krate::parse_strings(arguments)?;
                    #ident(#(#passed),*)
                }),
                None => quote!(#ident(#(#passed),*)),
            };
            quote! {
                impl #krate::PromptDef for #marker {
                    const ENTRY: #krate::PromptEntry = #krate::PromptEntry {
                        name: #name,
                        describe: || ::warden_plugin::Prompt {
                            name: ::std::string::String::from(#name),
                            title: #title.map(::std::string::String::from),
                            description: #description.map(::std::string::String::from),
                            arguments: #arguments,
                        },
                        get: |arguments, __input| ::warden_plugin::IntoPromptResult::into_prompt_result(#call, #description),
                    };
                }
            }
        }
    };
    let _ = call;
    Ok(quote! {
        #function

        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #vis struct #marker {}

        #definition
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_option_outside_the_contract_is_refused_naming_the_values() {
        let err = parse_options(Kind::Tool, quote!(task = "always"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("\"always\"") && err.contains("\"required\""), "{err}");
        let err = parse_options(Kind::Prompt, quote!(task = "optional"))
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("unknown option"), "{err}");
        let options = parse_options(Kind::Tool, quote!(task = "required", read_only)).unwrap();
        assert_eq!(options.task.unwrap().value(), "required");
    }
}
