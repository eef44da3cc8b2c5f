//! Permission answers (`PermissionResult`) and rule updates (`PermissionUpdate`).

use serde_json::{Map, Value};

use crate::extra::open_struct;
use crate::util::{present, tagged_union};
use crate::values::{
    PermissionBehavior, PermissionDecisionClassification, PermissionMode,
    PermissionUpdateDestination,
};

tagged_union! {
    /// `PermissionResult`: the success payload answering a `can_use_tool` request.
    pub enum PermissionResult (tag = "behavior") {
        "allow" => Allow(PermissionAllow),
        "deny" => Deny(PermissionDeny),
        _ => Other,
    }
}

impl PermissionResult {
    /// The `toolUseID` the answer is for, if given.
    pub fn tool_use_id(&self) -> Option<&str> {
        match self {
            Self::Allow(allow) => allow.tool_use_id.as_deref(),
            Self::Deny(deny) => deny.tool_use_id.as_deref(),
            Self::Other(raw) => raw.get("toolUseID").and_then(Value::as_str),
        }
    }
}

open_struct! {
    /// `{behavior:"allow", updatedInput?, updatedPermissions?, toolUseID?, decisionClassification?}`.
    /// The builders always set `updatedInput` (older CLIs require it).
    #[derive(Default)]
    pub struct PermissionAllow {
        /// The (possibly edited) tool input the CLI will run with.
        #[serde(rename = "updatedInput", default, deserialize_with = "present")]
        pub updated_input: Option<Value>,
        /// Rule / mode / directory updates to apply along with this answer.
        #[serde(rename = "updatedPermissions")]
        pub updated_permissions: Option<Vec<PermissionUpdate>>,
        #[serde(rename = "toolUseID")]
        pub tool_use_id: Option<String>,
        #[serde(rename = "decisionClassification")]
        pub decision_classification: Option<PermissionDecisionClassification>,
    }

    /// `{behavior:"deny", message, interrupt?, toolUseID?, decisionClassification?}`. `message` becomes
    /// the tool_result text; `interrupt: true` also aborts the turn.
    #[derive(Default)]
    pub struct PermissionDeny {
        pub message: String,
        pub interrupt: Option<bool>,
        #[serde(rename = "toolUseID")]
        pub tool_use_id: Option<String>,
        #[serde(rename = "decisionClassification")]
        pub decision_classification: Option<PermissionDecisionClassification>,
    }
}

tagged_union! {
    /// `PermissionUpdate`: the six update kinds. One malformed update makes the CLI ignore every
    /// update in the answer, so build them with the constructors here.
    pub enum PermissionUpdate (tag = "type") {
        "addRules" => AddRules(RulesUpdate),
        "replaceRules" => ReplaceRules(RulesUpdate),
        "removeRules" => RemoveRules(RulesUpdate),
        "setMode" => SetMode(SetModeUpdate),
        "addDirectories" => AddDirectories(DirectoriesUpdate),
        "removeDirectories" => RemoveDirectories(DirectoriesUpdate),
        _ => Other,
    }
}

impl PermissionUpdate {
    /// `addRules`.
    pub fn add_rules(
        rules: Vec<PermissionRuleValue>,
        behavior: PermissionBehavior,
        destination: PermissionUpdateDestination,
    ) -> Self {
        Self::AddRules(RulesUpdate::new(rules, behavior, destination))
    }

    /// `replaceRules`.
    pub fn replace_rules(
        rules: Vec<PermissionRuleValue>,
        behavior: PermissionBehavior,
        destination: PermissionUpdateDestination,
    ) -> Self {
        Self::ReplaceRules(RulesUpdate::new(rules, behavior, destination))
    }

    /// `removeRules`.
    pub fn remove_rules(
        rules: Vec<PermissionRuleValue>,
        behavior: PermissionBehavior,
        destination: PermissionUpdateDestination,
    ) -> Self {
        Self::RemoveRules(RulesUpdate::new(rules, behavior, destination))
    }

    /// `setMode`.
    pub fn set_mode(mode: PermissionMode, destination: PermissionUpdateDestination) -> Self {
        Self::SetMode(SetModeUpdate {
            mode,
            destination,
            extra: Map::new(),
        })
    }

    /// `addDirectories`.
    pub fn add_directories(
        directories: Vec<String>,
        destination: PermissionUpdateDestination,
    ) -> Self {
        Self::AddDirectories(DirectoriesUpdate {
            directories,
            destination,
            extra: Map::new(),
        })
    }

    /// `removeDirectories`.
    pub fn remove_directories(
        directories: Vec<String>,
        destination: PermissionUpdateDestination,
    ) -> Self {
        Self::RemoveDirectories(DirectoriesUpdate {
            directories,
            destination,
            extra: Map::new(),
        })
    }

    /// Where the update is stored (`None` for an unknown update type without a string
    /// `destination`).
    pub fn destination(&self) -> Option<PermissionUpdateDestination> {
        match self {
            Self::AddRules(update) | Self::ReplaceRules(update) | Self::RemoveRules(update) => {
                Some(update.destination.clone())
            }
            Self::SetMode(update) => Some(update.destination.clone()),
            Self::AddDirectories(update) | Self::RemoveDirectories(update) => {
                Some(update.destination.clone())
            }
            Self::Other(raw) => raw
                .get("destination")
                .and_then(Value::as_str)
                .map(Into::into),
        }
    }
}

/// Reading and editing an update (a permission suggestion the person adjusts before sending it).
impl PermissionUpdate {
    /// The rules of an `addRules` / `replaceRules` / `removeRules` update (empty otherwise).
    pub fn rules(&self) -> &[PermissionRuleValue] {
        match self {
            Self::AddRules(u) | Self::ReplaceRules(u) | Self::RemoveRules(u) => &u.rules,
            _ => &[],
        }
    }

    /// The directories of an `addDirectories` / `removeDirectories` update (empty otherwise).
    pub fn directories(&self) -> &[String] {
        match self {
            Self::AddDirectories(u) | Self::RemoveDirectories(u) => &u.directories,
            _ => &[],
        }
    }

    /// Sets `rules[index].ruleContent`; a blank `content` removes it (a whole-tool rule). Other
    /// kinds, or an index out of range, are left as they are.
    pub fn set_rule_content(&mut self, index: usize, content: &str) {
        if let Self::AddRules(u) | Self::ReplaceRules(u) | Self::RemoveRules(u) = self
            && let Some(rule) = u.rules.get_mut(index)
        {
            rule.rule_content = (!content.trim().is_empty()).then(|| content.to_owned());
        }
    }

    /// Sets the directories of an `addDirectories` / `removeDirectories` update.
    pub fn set_directories(&mut self, directories: Vec<String>) {
        if let Self::AddDirectories(u) | Self::RemoveDirectories(u) = self {
            u.directories = directories;
        }
    }

    /// Sets the mode of a `setMode` update.
    pub fn set_mode_to(&mut self, mode: PermissionMode) {
        if let Self::SetMode(u) = self {
            u.mode = mode;
        }
    }

    /// Sets where the update is stored (for an unknown kind: its `destination` field).
    pub fn set_destination(&mut self, destination: PermissionUpdateDestination) {
        match self {
            Self::AddRules(u) | Self::ReplaceRules(u) | Self::RemoveRules(u) => {
                u.destination = destination;
            }
            Self::SetMode(u) => u.destination = destination,
            Self::AddDirectories(u) | Self::RemoveDirectories(u) => u.destination = destination,
            Self::Other(raw) => {
                if let Some(map) = raw.as_object_mut() {
                    map.insert(
                        "destination".to_owned(),
                        Value::String(destination.as_str().to_owned()),
                    );
                }
            }
        }
    }
}

open_struct! {
    /// Body of `addRules` / `replaceRules` / `removeRules`.
    pub struct RulesUpdate {
        pub rules: Vec<PermissionRuleValue>,
        pub behavior: PermissionBehavior,
        pub destination: PermissionUpdateDestination,
    }
}

impl RulesUpdate {
    /// A rules update with no extra fields.
    pub fn new(
        rules: Vec<PermissionRuleValue>,
        behavior: PermissionBehavior,
        destination: PermissionUpdateDestination,
    ) -> Self {
        Self {
            rules,
            behavior,
            destination,
            extra: Map::new(),
        }
    }
}

open_struct! {
    /// Body of `setMode`.
    pub struct SetModeUpdate {
        pub mode: PermissionMode,
        pub destination: PermissionUpdateDestination,
    }

    /// Body of `addDirectories` / `removeDirectories`.
    pub struct DirectoriesUpdate {
        pub directories: Vec<String>,
        pub destination: PermissionUpdateDestination,
    }

    /// `PermissionRuleValue`: `{toolName, ruleContent?}`. `ruleContent` is omitted (never `null`) for
    /// a whole-tool rule.
    pub struct PermissionRuleValue {
        #[serde(rename = "toolName")]
        pub tool_name: String,
        #[serde(rename = "ruleContent")]
        pub rule_content: Option<String>,
    }
}

impl PermissionRuleValue {
    /// A rule for the whole tool (no `ruleContent`).
    pub fn tool(tool_name: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            rule_content: None,
            extra: Map::new(),
        }
    }

    /// A rule for the tool with specific content (e.g. a Bash command prefix).
    pub fn with_content(tool_name: impl Into<String>, rule_content: impl Into<String>) -> Self {
        Self {
            tool_name: tool_name.into(),
            rule_content: Some(rule_content.into()),
            extra: Map::new(),
        }
    }
}
