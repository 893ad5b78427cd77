//! The values of entries' `${input:NAME}` references, for the manager's start of a server
//! ([`InputValues`]): read from the credential store under the entry's scope, project and
//! server ([`crate::install::secrets`]), put into that one start in memory.

use crate::config::ServerConfig;
use crate::install::ServerSecrets;
use crate::manager::InputValues;

/// The project's entries' input values, from the credential store.
pub struct EntryInputs(pub ServerSecrets);

impl InputValues for EntryInputs {
    fn value(&self, cfg: &ServerConfig, name: &str) -> Option<String> {
        self.0.get(cfg.scope, &cfg.name, name)
    }
}
