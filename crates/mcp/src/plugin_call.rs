//! The part tools, reads and prompts share: run the plugin call round after
//! round (asking the client what the plugin asks), and turn how it came out
//! into an `Ended`.

use rmcp::model::InputRequiredResult;

use crate::interaction::{self, Asked, Asker, Binding, Driven, Retry};
use crate::invocation::Ended;
use warden_plugins::plugin::Reply;
use warden_runtime::contract::types;
use warden_runtime::{Asks, CallContext, CallFailure, CallReport};

/// What a plugin call came to: its reply (or its error), or a failure.
pub(crate) type PluginReply<R> = Result<Result<R, types::Error>, CallFailure>;

/// Runs `round` (one sandbox each: a fresh `call` that may ask what the
/// client and the grant allow) until the plugin answers. A plugin still
/// asking becomes `input_required`'s answer, a retry the client could not
/// make an error; the plugin's reply goes to `convert` with the report,
/// which by then holds the denied interaction requests.
pub(crate) async fn drive_and_convert<R, T, Fut>(
    asker: &Asker<'_>,
    binding: &Binding,
    retry: Retry<'_>,
    call: &CallContext,
    mut round: impl FnMut(Option<types::InputAnswers>, CallContext) -> Fut,
    input_required: impl FnOnce(InputRequiredResult) -> T,
    convert: impl FnOnce(PluginReply<R>, CallReport) -> Ended<T>,
) -> Ended<T>
where
    Fut: Future<Output = (Result<Result<Reply<R, Asked>, types::Error>, CallFailure>, CallReport)>,
{
    let mut denied = Vec::new();
    let driven = interaction::drive(asker, binding, retry, &mut denied, |input, asks: Asks| {
        let mut call = call.clone();
        call.asks = asks;
        round(input, call)
    })
    .await;
    match driven {
        Ok(Driven::Done(reply, mut report)) => {
            report.add_interaction_denials(denied);
            convert(reply, report)
        }
        Ok(Driven::InputRequired(asked, report)) => Ended::asking(input_required(asked), report, denied),
        Err(error) => Ended::refused(error, denied),
    }
}
