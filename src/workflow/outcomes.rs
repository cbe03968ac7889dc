//! How a character's transactions ended, per workflow: the character-workflow design's
//! analytics (its phase 4: transaction success rates, workflow completion). Counted from
//! the `transactions` table as the caller may read it (under Supabase's row-level
//! security, the signed-in user's own; offline, the tab's).

use serde::Serialize;

use super::transaction::{TABLE, Transaction, TransactionStatus, Transactions};
use crate::store::{Filtered, Select, StoreError};

/// The most transactions counted, newest first: older ones are left out of the tally.
pub const MAX_COUNTED: u64 = 10_000;

/// One workflow type's transactions by how they stand.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Outcomes {
    pub transaction_type: String,
    pub pending: u64,
    pub completed: u64,
    pub cancelled: u64,
    pub expired: u64,
}

impl Outcomes {
    /// Completed out of those that ended (completed, cancelled or expired); `None` while
    /// none has ended. Pending ones are not counted either way.
    pub fn completion_rate(&self) -> Option<f64> {
        let ended = self.completed + self.cancelled + self.expired;
        (ended > 0).then(|| self.completed as f64 / ended as f64)
    }

    fn count(&mut self, status: TransactionStatus) {
        let slot = match status {
            TransactionStatus::Pending => &mut self.pending,
            TransactionStatus::Completed => &mut self.completed,
            TransactionStatus::Cancelled => &mut self.cancelled,
            TransactionStatus::Expired => &mut self.expired,
        };
        *slot = slot.saturating_add(1);
    }
}

impl Transactions<'_> {
    /// This character's transactions tallied per workflow type, every user's the store
    /// lets the caller read, in the order each type first appears (newest first). At
    /// most [`MAX_COUNTED`] are read.
    pub async fn outcomes(&self) -> Result<Vec<Outcomes>, StoreError> {
        let select = Select::from(TABLE)
            .eq("character", self.character)
            .order("created_at", false)
            .limit(MAX_COUNTED);
        let mut tally: Vec<Outcomes> = Vec::new();
        for row in self.store.select(&select).await? {
            let transaction = Transaction::from_row(row)?;
            let index = match tally
                .iter()
                .position(|o| o.transaction_type == transaction.transaction_type)
            {
                Some(index) => index,
                None => {
                    tally.push(Outcomes {
                        transaction_type: transaction.transaction_type.clone(),
                        ..Outcomes::default()
                    });
                    tally.len().saturating_sub(1)
                }
            };
            if let Some(outcomes) = tally.get_mut(index) {
                outcomes.count(transaction.status);
            }
        }
        Ok(tally)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_counts_ended_transactions_only() {
        let mut outcomes = Outcomes::default();
        assert_eq!(outcomes.completion_rate(), None);
        outcomes.count(TransactionStatus::Pending);
        assert_eq!(outcomes.completion_rate(), None);
        outcomes.count(TransactionStatus::Completed);
        outcomes.count(TransactionStatus::Cancelled);
        assert_eq!(outcomes.completion_rate(), Some(0.5));
    }
}
