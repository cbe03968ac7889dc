//! Transactions: one pending per user, character and workflow type, moving through a workflow's
//! states to completed, cancelled or expired — kept in the `transactions` table
//! through the [`Store`] seam (Supabase online, the local store offline).

use crate::base::json::Read;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::base::clock::Instant;
use crate::store::{Filtered, Insert, Patch, Row, Select, Store, StoreError, row};

pub(super) const TABLE: &str = "transactions";
/// The most pending transactions read at once (a character has a few workflows).
const MAX_PENDING: u64 = 100;

/// Where a transaction is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransactionStatus {
    Pending,
    Completed,
    Cancelled,
    Expired,
}

/// A transaction as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Transaction {
    pub id: String,
    pub user_id: String,
    pub character: String,
    pub transaction_type: String,
    /// The workflow state it waits in.
    pub state: String,
    pub status: TransactionStatus,
    pub context: Map<String, Value>,
    pub created_at: String,
    pub updated_at: String,
}

impl Transaction {
    pub(super) fn from_row(row: Row) -> Result<Self, StoreError> {
        crate::base::json::from_value(Value::Object(row))
            .map_err(|e| StoreError::Invalid(format!("a transaction row cannot be read ({e})")))
    }

    /// When it last changed, in milliseconds since the epoch.
    pub fn updated_ms(&self) -> Option<i64> {
        parse_rfc3339(&self.updated_at)
    }
}

/// The transactions of one character.
pub struct Transactions<'a> {
    pub store: &'a dyn Store,
    pub character: &'a str,
}

impl Transactions<'_> {
    /// The user's newest pending transaction with this character, if any.
    pub async fn pending(&self, user: &str) -> Result<Option<Transaction>, StoreError> {
        Ok(self.all_pending(user).await?.into_iter().next())
    }

    /// The user's pending transactions with this character, one per workflow type
    /// (the newest, should a store hold two), newest first.
    pub async fn all_pending(&self, user: &str) -> Result<Vec<Transaction>, StoreError> {
        let select = Select::from(TABLE)
            .eq("user_id", user)
            .eq("character", self.character)
            .eq("status", "pending")
            .order("created_at", false)
            .limit(MAX_PENDING);
        let mut rows = Vec::new();
        for row in self.store.select(&select).await? {
            rows.push(Transaction::from_row(row)?);
        }
        // By instant, not by text: stamps may differ in offset or precision.
        crate::base::sort::sort_by_key(&mut rows, |t| {
            std::cmp::Reverse(parse_rfc3339(&t.created_at).unwrap_or(i64::MIN))
        });
        let mut found: Vec<Transaction> = Vec::new();
        for transaction in rows {
            if !found
                .iter()
                .any(|t| t.transaction_type == transaction.transaction_type)
            {
                found.push(transaction);
            }
        }
        Ok(found)
    }

    pub async fn create(
        &self,
        user: &str,
        transaction_type: &str,
        state: &str,
        context: Map<String, Value>,
        now: Instant,
    ) -> Result<Transaction, StoreError> {
        let stamp = stamp(now);
        let row = row([
            ("user_id", json!(user)),
            ("character", json!(self.character)),
            ("transaction_type", json!(transaction_type)),
            ("state", json!(state)),
            ("status", json!("pending")),
            ("context", Value::Object(context)),
            ("created_at", json!(stamp)),
            ("updated_at", json!(stamp)),
        ]);
        let insert = Insert {
            table: TABLE.into(),
            rows: vec![row],
            on_conflict: None,
            client_key: None,
            returning: true,
        };
        let mut rows = self.store.insert(&insert).await?;
        let row = rows
            .pop()
            .ok_or_else(|| StoreError::Server("the new transaction was not returned".into()))?;
        Transaction::from_row(row)
    }

    /// Moves `transaction` to `state` and `status` with `context`, if it is still
    /// pending (a concurrent change wins; the result says which).
    pub async fn change(
        &self,
        transaction: &Transaction,
        state: &str,
        status: TransactionStatus,
        context: Map<String, Value>,
        now: Instant,
    ) -> Result<Option<Transaction>, StoreError> {
        let set = row([
            ("state", json!(state)),
            ("status", json!(status)),
            ("context", Value::Object(context)),
            ("updated_at", json!(stamp(now))),
        ]);
        let update = Patch {
            table: TABLE.into(),
            set,
            filters: Vec::new(),
            returning: true,
        }
        .eq("id", transaction.id.as_str())
        .eq("status", "pending");
        let mut rows = self.store.update(&update).await?;
        rows.pop().map(Transaction::from_row).transpose()
    }
}

/// `now` in RFC 3339 with milliseconds, so two changes within a second still order.
fn stamp(now: Instant) -> String {
    let text = now.rfc3339();
    let (seconds, offset) = text.split_at(text.len().min(19));
    format!("{seconds}.{:03}{offset}", now.epoch_ms.rem_euclid(1_000))
}

/// Milliseconds since the epoch of an RFC 3339 timestamp such as
/// `2026-11-22T09:00:00.123+01:00` (PostgreSQL's and the local store's format).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    let rest = text.get(19..)?;
    let (fraction, zone) = match rest.strip_prefix('.') {
        Some(r) => {
            let digits = r.chars().take_while(char::is_ascii_digit).count();
            let ms = r.get(..digits.min(3))?;
            let ms = format!("{ms:0<3}").parse::<i64>().ok()?;
            (ms, r.get(digits..)?)
        }
        None => (0, rest),
    };
    let offset_minutes = match zone {
        "Z" | "z" | "" => 0,
        zone => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let hours = zone.get(1..3)?.parse::<i64>().ok()?;
            let minutes = zone.get(4..6).map_or(Some(0), |m| m.parse::<i64>().ok())?;
            sign * (hours * 60 + minutes)
        }
    };
    let month = u32::try_from(month).ok()?;
    let day = u32::try_from(day).ok()?;
    let days = crate::base::clock::days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3_600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1_000 + fraction)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_parse_with_fractions_and_offsets() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2026-11-22T04:16:04+00:00"),
            Some(1_795_320_964_000)
        );
        assert_eq!(
            parse_rfc3339("2026-11-22T05:16:04.5+01:00"),
            Some(1_795_320_964_500)
        );
        assert_eq!(
            parse_rfc3339("2026-11-21T22:46:04.123456-05:30"),
            Some(1_795_320_964_123)
        );
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn stamps_keep_milliseconds_and_read_back() {
        let now = Instant {
            epoch_ms: 1_795_320_964_042,
            utc_offset_minutes: 60,
        };
        assert_eq!(stamp(now), "2026-11-22T05:16:04.042+01:00");
        assert_eq!(parse_rfc3339(&stamp(now)), Some(now.epoch_ms));
    }
}
