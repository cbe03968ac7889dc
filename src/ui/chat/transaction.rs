//! How the inspector shows a character's transaction.

use crate::workflow::{Transaction, TransactionStatus};

/// A transaction as the inspector shows it: type, state or status, and context.
pub(super) fn describe(transaction: &Transaction) -> String {
    let place = match transaction.status {
        TransactionStatus::Pending => transaction.state.clone(),
        status => format!("{status:?}").to_lowercase(),
    };
    let context: Vec<String> = transaction
        .context
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            v => format!("{k}={v}"),
        })
        .collect();
    format!(
        "{} · {place} · {}",
        transaction.transaction_type,
        context.join(", ")
    )
}
