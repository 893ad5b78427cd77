//! The service end to end without a network: records are put in the registry cache as a
//! registry's answers (fresh, so nothing is asked), then planned, filled and committed.

use super::*;
use serde_json::json;

struct Setup {
    _dir: tempfile::TempDir,
    project: PathBuf,
    installer: Installer,
    approvals: ApprovalStore,
    files: ScopeFiles,
    store: Arc<CredentialStore>,
}

const REGISTRY: &str = "http://registry.invalid";

fn setup(records: &[serde_json::Value]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("proj");
    std::fs::create_dir_all(&project).unwrap();
    let files = ScopeFiles::within(&project, &root.join("cfg"), &root.join("data"));
    let approvals = ApprovalStore::at(root.join("data/approvals.json"));
    let store = Arc::new(CredentialStore::memory());
    let installer = Installer::new(&project, files.clone(), approvals.clone(), store.clone())
        .with_data_dir(&root.join("data"))
        .with_path(None);
    let cache = cache::Cache::at(root.join("data").join(cache::CACHE_DIR));
    for r in records {
        let name = r["name"].as_str().unwrap();
        let body = json!({"server": r, "_meta": {record::OFFICIAL_META: {"isLatest": true, "status": "active"}}});
        cache.put(&format!("server {REGISTRY} {name} latest"), &body);
        let v = r["version"].as_str().unwrap();
        cache.put(&format!("server {REGISTRY} {name} {v}"), &body);
    }
    Setup {
        _dir: dir,
        project,
        installer,
        approvals,
        files,
        store,
    }
}

fn weather(version: &str) -> serde_json::Value {
    json!({"name": "io.github.example/weather", "description": "Weather.", "version": version,
           "packages": [{"registryType": "npm", "identifier": "weather-mcp", "version": version,
                         "environmentVariables": [
                             {"name": "WEATHER_KEY", "isRequired": true, "isSecret": true},
                             {"name": "UNITS", "default": "metric", "choices": ["metric", "imperial"]}]}]})
}

fn request(scope: Scope) -> RegistryInstall {
    RegistryInstall {
        name: "io.github.example/weather".into(),
        version: None,
        local_name: None,
        scope,
        choice: Choice::Package(PackageKind::Npm),
        registries: vec![REGISTRY.into()],
    }
}

fn answers(pairs: &[(&str, &str)]) -> Answers {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn a_plan_is_written_exactly_as_shown_with_its_secret_approval_and_origin() {
    let s = setup(&[weather("1.0.0")]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let plan = rt
        .block_on(s.installer.plan(&request(Scope::Project)))
        .unwrap();
    assert_eq!(plan.name, "weather");
    assert_eq!(
        plan.missing()
            .iter()
            .map(|v| v.name.as_str())
            .collect::<Vec<_>>(),
        vec!["WEATHER_KEY"]
    );
    let given = answers(&[("WEATHER_KEY", "k-1"), ("UNITS", "imperial")]);
    let filled = plan.fill(&given).unwrap();
    assert_eq!(
        filled.entry,
        json!({"type": "stdio", "command": "npx", "args": ["-y", "weather-mcp@1.0.0"],
               "env": {"WEATHER_KEY": "${input:WEATHER_KEY}", "UNITS": "imperial"}})
    );
    assert!(
        !format!("{filled:?}").contains("k-1"),
        "no secret in Debug output"
    );
    assert!(!serde_json::to_string(&filled).unwrap().contains("k-1"));

    // A commit naming another digest writes nothing.
    let e = s.installer.commit(&plan, &given, "0000").unwrap_err();
    assert_eq!(e.code(), "changed-since-shown");
    assert!(!s.files.project.exists());

    let done = s.installer.commit(&plan, &given, &filled.digest).unwrap();
    assert_eq!(done.secrets, vec!["WEATHER_KEY"]);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&s.files.project).unwrap()).unwrap();
    assert_eq!(written["mcpServers"]["weather"], filled.entry);
    assert_eq!(
        s.installer
            .secrets()
            .get(Scope::Project, "weather", "WEATHER_KEY")
            .as_deref(),
        Some("k-1")
    );
    // Approved exactly as written.
    let cfg = crate::config::McpConfig::load_files(&s.files);
    let weather = cfg.servers["weather"].as_ref().unwrap();
    assert!(s.approvals.is_approved(&s.project, weather));
    let from = s
        .installer
        .installed()
        .get(Scope::Project, &s.project, "weather")
        .unwrap();
    assert_eq!(
        (
            from.registry.as_str(),
            from.name.as_str(),
            from.version.as_str(),
            from.package.as_deref()
        ),
        (REGISTRY, "io.github.example/weather", "1.0.0", Some("npm"))
    );
    assert_eq!(from.values, answers(&[("UNITS", "imperial")]));

    // Values outside the choices, unknown names: refused.
    assert_eq!(
        plan.fill(&answers(&[("WEATHER_KEY", "k"), ("UNITS", "kelvin")]))
            .unwrap_err()
            .to_string(),
        "the value of \"UNITS\" cannot be used: it must be one of: metric, imperial"
    );
    assert_eq!(
        plan.fill(&answers(&[("NOPE", "x")]))
            .unwrap_err()
            .to_string(),
        "\"NOPE\" is not a value this server asks for (it asks for: WEATHER_KEY, UNITS)"
    );

    // Installing it again is an update of the same entry (nothing new to give).
    let again = rt
        .block_on(s.installer.plan(&request(Scope::Project)))
        .unwrap();
    assert_eq!(again.kept_secrets, vec!["WEATHER_KEY"]);
    assert_eq!(again.values, answers(&[("UNITS", "imperial")]));
    assert!(again.replaces.is_some());
    let filled = again.fill(&Answers::new()).unwrap();
    s.installer
        .commit(&again, &Answers::new(), &filled.digest)
        .unwrap();

    // Its secrets, by the façade calls front ends use.
    let (scope, states) = s.installer.secret_states("weather").unwrap();
    assert_eq!(scope, Scope::Project);
    assert_eq!(states[0].set, Some(true));
    assert_eq!(
        s.installer
            .set_secret("weather", "OTHER", "x")
            .unwrap_err()
            .to_string(),
        "server \"weather\" has no input \"OTHER\" (its entry refers to: WEATHER_KEY)"
    );
    s.installer
        .set_secret("weather", "WEATHER_KEY", "k-2")
        .unwrap();
    assert_eq!(
        s.installer
            .secrets()
            .get(Scope::Project, "weather", "WEATHER_KEY")
            .as_deref(),
        Some("k-2")
    );
    assert_eq!(
        s.installer.remove_secret("weather", "WEATHER_KEY").unwrap(),
        (Scope::Project, true)
    );
    assert!(s.store.server_secret("x").is_none());
}

#[test]
fn a_name_taken_by_another_entry_is_refused_and_the_file_is_checked_at_commit() {
    let s = setup(&[weather("1.0.0")]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    crate::config::servers::add_server(
        &s.files,
        Scope::Local,
        "weather",
        json!({"command": "mine"}),
    )
    .unwrap();
    let e = rt
        .block_on(s.installer.plan(&request(Scope::Local)))
        .unwrap_err();
    assert_eq!(e.code(), "server-exists");
    // Planned while the name was free, then taken before the commit: refused.
    let mut req = request(Scope::Local);
    req.local_name = Some("weather2".into());
    let plan = rt.block_on(s.installer.plan(&req)).unwrap();
    let given = answers(&[("WEATHER_KEY", "k")]);
    let filled = plan.fill(&given).unwrap();
    crate::config::servers::add_server(&s.files, Scope::Local, "weather2", json!({"command": "x"}))
        .unwrap();
    let e = s
        .installer
        .commit(&plan, &given, &filled.digest)
        .unwrap_err();
    assert_eq!(e.code(), "server-exists");
}

#[test]
fn versions_compare_as_versions() {
    assert!(newer("1.10.0", "1.9.3"));
    assert!(newer("2.0.0", "2.0.0-beta.1"));
    assert!(!newer("2.0.0-beta.1", "2.0.0"));
    assert!(!newer("1.0.0", "1.0.0"));
    assert!(newer("v1.0.1", "1.0.0"));
    assert!(!newer("0.9", "1.0.0"));
}

#[test]
fn an_install_argument_is_a_bundle_or_a_registry_name() {
    assert_eq!(
        InstallTarget::parse("./x.mcpb"),
        InstallTarget::Bundle(PathBuf::from("./x.mcpb"))
    );
    let file = tempfile::NamedTempFile::new().unwrap();
    let path = file.path().display().to_string();
    assert_eq!(
        InstallTarget::parse(&path),
        InstallTarget::Bundle(PathBuf::from(&path))
    );
    assert_eq!(
        InstallTarget::parse("io.github.a/b@1.2.3"),
        InstallTarget::Registry {
            name: "io.github.a/b".into(),
            version: Some("1.2.3".into())
        }
    );
    assert_eq!(
        InstallTarget::parse("io.github.a/b"),
        InstallTarget::Registry {
            name: "io.github.a/b".into(),
            version: None
        }
    );
}
