//! Packaging (issue 46 points 3 and 4): the Debian packages scripts/deb builds pass lintian
//! with only their documented overrides and hold every file Debian expects; scripts/deb
//! refuses to build a package without its man page; the Yocto crates include is exactly
//! what `cargo-update-recipe-crates` writes from Cargo.lock; the Buildroot and Yocto
//! recipes carry Cargo.toml's version and licence, and the licence files' hashes.
//!
//! The man page and completions come from the build (build.rs writes them where
//! FLASHSCOPE_GEN_DIR points); these tests give scripts/deb a fixture directory of the
//! same shape. Regenerate the crates include after a Cargo.lock change with
//!
//! ```text
//! FLASHSCOPE_UPDATE_CRATES_INC=1 cargo test --test e2e packaging::
//! ```

use crate::common::{skip, tool};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A `key = "value"` of Cargo.toml's [package] table.
fn package_field(key: &str) -> String {
    let toml = read("Cargo.toml");
    let package = toml
        .split("\n[")
        .find(|t| t.starts_with("[package]"))
        .expect("Cargo.toml has a [package] table");
    package
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches('"').to_string())
        })
        .unwrap_or_else(|| panic!("Cargo.toml's [package] has no {key}"))
}

// ---------------------------------------------------------------- Debian (scripts/deb)

/// The four files build.rs writes into FLASHSCOPE_GEN_DIR, as small valid fixtures.
fn fixture_gen_dir(dir: &Path) {
    std::fs::create_dir_all(dir.join("completions")).unwrap();
    std::fs::write(
        dir.join("flashscope.1"),
        ".TH FLASHSCOPE 1 \"\" \"flashscope\" \"User Commands\"\n\
         .SH NAME\nflashscope \\- measure flash storage\n\
         .SH SYNOPSIS\n\\fBflashscope\\fR \\fICOMMAND\\fR\n\
         .SH DESCRIPTION\nA fixture page of the shape build.rs writes.\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("completions/flashscope.bash"),
        "complete -W 'auto info align' flashscope\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("completions/_flashscope"),
        "#compdef flashscope\n_arguments '1: :(auto info align)'\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("completions/flashscope.fish"),
        "complete -c flashscope -f -a 'auto info align'\n",
    )
    .unwrap();
}

/// A stripped, statically linked fixture executable like the release binaries: `-static`
/// gives a plain static executable (the aarch64 and armv7 builds), `-static-pie` a static
/// position-independent one (the x86_64 musl build). None when there is no C compiler
/// with a static C library here.
fn fixture_binary(dir: &Path, kind: &str) -> Option<PathBuf> {
    let cc = tool("cc")?;
    let src = dir.join("fixture.c");
    std::fs::write(
        &src,
        "#include <stdio.h>\nint main(void) { puts(\"flashscope 0.1.0\"); return 0; }\n",
    )
    .unwrap();
    let out = dir.join(format!("flashscope{kind}"));
    let mut c = Command::new(cc);
    c.arg(kind).args(["-s", "-O2", "-o"]).arg(&out).arg(&src);
    if kind == "-static-pie" {
        c.arg("-fPIE");
    }
    c.status().ok()?.success().then_some(out)
}

/// Run scripts/deb; (exit status, stderr, the .deb it printed).
fn deb(binary: &Path, arch: &str, gen: &Path, dist: &Path) -> (bool, String, PathBuf) {
    let out = Command::new(root().join("scripts/deb"))
        .arg(binary)
        .arg(arch)
        .arg(gen)
        .arg(dist)
        .env("SOURCE_DATE_EPOCH", "1795830911")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        PathBuf::from(printed),
    )
}

/// lintian's E: and W: lines for a package (overridden tags print as O:, infos as I:).
fn lintian_complaints(lintian: &Path, deb: &Path) -> Vec<String> {
    let out = Command::new(lintian)
        .arg("--allow-root")
        .arg(deb)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .chain(String::from_utf8_lossy(&out.stderr).lines())
        .filter(|l| l.starts_with("E: ") || l.starts_with("W: "))
        .map(str::to_string)
        .collect()
}

fn dpkg_deb(args: &[&str], deb: &Path) -> String {
    let out = Command::new("dpkg-deb")
        .args(args)
        .arg(deb)
        .output()
        .unwrap();
    assert!(out.status.success(), "dpkg-deb {args:?} {deb:?} failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The tools the Debian tests need, or None after one skip line.
fn debian_tools() -> Option<PathBuf> {
    for t in ["dpkg-deb", "readelf"] {
        if tool(t).is_none() {
            skip(&format!(
                "{t} is missing (Debian: apt-get install dpkg binutils)"
            ));
            return None;
        }
    }
    let Some(lintian) = tool("lintian") else {
        skip("lintian is missing (Debian: apt-get install lintian)");
        return None;
    };
    Some(lintian)
}

#[test]
fn deb_packages_pass_lintian_with_only_their_documented_overrides() {
    let Some(lintian) = debian_tools() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let gen = dir.path().join("gen");
    fixture_gen_dir(&gen);
    // (how the fixture is linked, the override lintian needs for it)
    for (kind, tag) in [
        ("-static", "statically-linked-binary"),
        ("-static-pie", "shared-library-lacks-prerequisites"),
    ] {
        let Some(binary) = fixture_binary(dir.path(), kind) else {
            skip(&format!(
                "cc {kind} does not link here (Debian: apt-get install gcc libc6-dev)"
            ));
            return;
        };
        let dist = dir.path().join(format!("dist{kind}"));
        let (ok, err, package) = deb(&binary, "amd64", &gen, &dist);
        assert!(ok, "scripts/deb failed: {err}");
        assert_eq!(
            package,
            dist.join(format!(
                "flashscope_{}-1_amd64.deb",
                package_field("version")
            ))
        );
        // The same binary and generated files give the same package, byte for byte.
        let (ok, err, again) = deb(&binary, "amd64", &gen, &dist.join("again"));
        assert!(ok, "scripts/deb failed: {err}");
        assert!(
            std::fs::read(&package).unwrap() == std::fs::read(&again).unwrap(),
            "two packages of the same input differ"
        );
        let complaints = lintian_complaints(&lintian, &package);
        assert!(
            complaints.is_empty(),
            "lintian on the {kind} package: {complaints:#?}"
        );

        // Every file Debian expects, where it expects it.
        let files = dpkg_deb(&["-c"], &package);
        for path in [
            "./usr/bin/flashscope",
            "./usr/share/man/man1/flashscope.1.gz",
            "./usr/share/bash-completion/completions/flashscope",
            "./usr/share/zsh/vendor-completions/_flashscope",
            "./usr/share/fish/vendor_completions.d/flashscope.fish",
            "./usr/share/doc/flashscope/copyright",
            "./usr/share/doc/flashscope/changelog.Debian.gz",
            "./usr/share/lintian/overrides/flashscope",
        ] {
            assert!(
                files.lines().any(|l| l.ends_with(path)),
                "{path} is not in the package:\n{files}"
            );
        }
        assert!(
            files.lines().all(|l| l.contains(" root/root ")),
            "files not owned by root:\n{files}"
        );
        let control = dpkg_deb(&["-f"], &package);
        for field in [
            "Package: flashscope",
            "Architecture: amd64",
            "Installed-Size: ",
            "Maintainer: ",
            "Description: ",
        ] {
            assert!(control.contains(field), "control lacks {field}:\n{control}");
        }

        let unpacked = dir.path().join(format!("unpacked{kind}"));
        let status = Command::new("dpkg-deb")
            .arg("-x")
            .arg(&package)
            .arg(&unpacked)
            .status()
            .unwrap();
        assert!(status.success());
        // gzip -n: no file name and no time stamp in the header (reproducible).
        for gz in [
            "usr/share/man/man1/flashscope.1.gz",
            "usr/share/doc/flashscope/changelog.Debian.gz",
        ] {
            let bytes = std::fs::read(unpacked.join(gz)).unwrap();
            assert_eq!(&bytes[..2], &[0x1f, 0x8b], "{gz} is not gzip");
            assert_eq!(
                bytes[3] & 0x08,
                0,
                "{gz} stores a file name (gzip without -n)"
            );
            assert_eq!(
                &bytes[4..8],
                &[0, 0, 0, 0],
                "{gz} stores a time (gzip without -n)"
            );
        }
        // The override is the one tag this kind of static binary gets, with its reason.
        let overrides =
            std::fs::read_to_string(unpacked.join("usr/share/lintian/overrides/flashscope"))
                .unwrap();
        assert!(
            overrides.contains(&format!("flashscope: {tag} [usr/bin/flashscope]")),
            "{overrides}"
        );
        // The copyright file gives Cargo.toml's licence in DEP-5's words.
        let copyright =
            std::fs::read_to_string(unpacked.join("usr/share/doc/flashscope/copyright")).unwrap();
        let licence = package_field("license").replace(" OR ", " or ");
        assert!(
            copyright.contains(&format!("License: {licence}\n")),
            "{copyright}"
        );
    }

    // Negative control: a bare package of the same binary (what the issue found) gets
    // lintian's errors, so an empty complaint list above is lintian's verdict and not a
    // reading that sees nothing.
    let bare = dir.path().join("bare");
    std::fs::create_dir_all(bare.join("DEBIAN")).unwrap();
    std::fs::create_dir_all(bare.join("usr/bin")).unwrap();
    std::fs::copy(
        fixture_binary(dir.path(), "-static").unwrap(),
        bare.join("usr/bin/flashscope"),
    )
    .unwrap();
    std::fs::write(
        bare.join("DEBIAN/control"),
        "Package: flashscope\nVersion: 0.1.0\nArchitecture: amd64\n\
         Maintainer: A <a@example.org>\nDescription: flash storage\n",
    )
    .unwrap();
    let bare_deb = dir.path().join("bare.deb");
    let status = Command::new("dpkg-deb")
        .args(["--root-owner-group", "--build"])
        .arg(&bare)
        .arg(&bare_deb)
        .output()
        .unwrap()
        .status;
    assert!(status.success());
    let complaints = lintian_complaints(&lintian, &bare_deb);
    for tag in [
        "no-copyright-file",
        "statically-linked-binary",
        "no-manual-page",
    ] {
        assert!(
            complaints.iter().any(|l| l.contains(tag)),
            "lintian does not report {tag} on a bare package: {complaints:#?}"
        );
    }
}

/// No package without its man page or a completion: scripts/deb fails naming the file.
#[test]
fn deb_refuses_a_build_without_its_man_page_or_completions() {
    if tool("dpkg-deb").is_none() {
        skip("dpkg-deb is missing (Debian: apt-get install dpkg)");
        return;
    }
    let binary = assert_cmd::cargo::cargo_bin("flashscope");
    for missing in [
        "flashscope.1",
        "completions/flashscope.bash",
        "completions/_flashscope",
        "completions/flashscope.fish",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let gen = dir.path().join("gen");
        fixture_gen_dir(&gen);
        std::fs::remove_file(gen.join(missing)).unwrap();
        let dist = dir.path().join("dist");
        let (ok, err, _) = deb(&binary, "arm64", &gen, &dist);
        assert!(!ok, "scripts/deb built a package without {missing}");
        assert!(
            err.contains(&format!("{}/{missing} is missing", gen.display())),
            "the error does not name {missing}: {err}"
        );
        assert!(
            !dist.exists() || std::fs::read_dir(&dist).unwrap().next().is_none(),
            "a package was written without {missing}"
        );
    }
}

/// scripts/release names each board target's package with its Debian architecture.
#[test]
fn each_board_target_has_its_debian_architecture() {
    let arch = |triple: &str| {
        let out = Command::new("bash")
            .arg("-c")
            .arg(". scripts/board-targets.sh && board_deb_arch \"$1\"")
            .arg("bash")
            .arg(triple)
            .current_dir(root())
            .output()
            .unwrap();
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    assert_eq!(arch("x86_64-unknown-linux-musl").as_deref(), Some("amd64"));
    assert_eq!(arch("aarch64-unknown-linux-musl").as_deref(), Some("arm64"));
    assert_eq!(
        arch("armv7-unknown-linux-musleabihf").as_deref(),
        Some("armhf")
    );
    assert_eq!(
        arch("armv7-unknown-linux-gnueabihf").as_deref(),
        Some("armhf")
    );
    // Soft float is not armhf: no package rather than a wrong one.
    assert_eq!(arch("armv7-unknown-linux-musleabi"), None);
    assert_eq!(arch("riscv64gc-unknown-linux-gnu"), None);
}

// ---------------------------------------------------------------- Yocto and Buildroot

/// The crates include `bitbake -c update_crates flashscope` writes (openembedded-core's
/// cargo-update-recipe-crates class) from a Cargo.lock: every package from crates.io, in
/// the lock's order, as a `crate://` line named NAME-VERSION, then the checksum of each.
/// A pure function of the lock.
fn crates_inc(lock: &str) -> String {
    let mut uris = String::new();
    let mut sums = String::new();
    for block in lock.split("[[package]]").skip(1) {
        let field = |key: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(" = ")?;
                (k == key).then(|| v.trim_matches('"').to_string())
            })
        };
        let (Some(name), Some(version)) = (field("name"), field("version")) else {
            continue;
        };
        if !field("source").is_some_and(|s| s.contains("crates.io")) {
            continue;
        }
        let key = format!("{name}-{version}");
        uris.push_str(&format!(
            "\n    crate://crates.io/{name}/{version};name={key} \\"
        ));
        if let Some(sum) = field("checksum") {
            sums.push_str(&format!("\nSRC_URI[{key}.sha256sum] = \"{sum}\""));
        }
    }
    format!(
        "# Autogenerated with 'bitbake -c update_crates flashscope'\n\n\
         # from Cargo.lock\nSRC_URI += \" \\{uris}\n\"\n{sums}\n"
    )
}

#[test]
fn crates_inc_lists_each_crates_io_package_of_a_lock_with_its_checksum() {
    let lock = "version = 4\n\n\
        [[package]]\nname = \"adler2\"\nversion = \"2.0.1\"\n\
        source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\
        checksum = \"aa\"\n\n\
        [[package]]\nname = \"flashscope\"\nversion = \"0.1.0\"\ndependencies = [\n \"adler2\",\n]\n\n\
        [[package]]\nname = \"forked\"\nversion = \"1.0.0\"\n\
        source = \"git+https://example.org/forked#abc\"\n\n\
        [[package]]\nname = \"libc\"\nversion = \"0.2.1\"\n\
        source = \"registry+https://github.com/rust-lang/crates.io-index\"\n\
        checksum = \"bb\"\n";
    assert_eq!(
        crates_inc(lock),
        "# Autogenerated with 'bitbake -c update_crates flashscope'\n\
         \n\
         # from Cargo.lock\n\
         SRC_URI += \" \\\n    \
         crate://crates.io/adler2/2.0.1;name=adler2-2.0.1 \\\n    \
         crate://crates.io/libc/0.2.1;name=libc-0.2.1 \\\n\
         \"\n\
         \n\
         SRC_URI[adler2-2.0.1.sha256sum] = \"aa\"\n\
         SRC_URI[libc-0.2.1.sha256sum] = \"bb\"\n"
    );
    // A changed checksum or version is a changed include (the drift the test below finds).
    assert_ne!(
        crates_inc(lock),
        crates_inc(&lock.replace("\"bb\"", "\"cc\""))
    );
    assert_ne!(
        crates_inc(lock),
        crates_inc(&lock.replace("0.2.1", "0.2.2"))
    );
}

#[test]
fn yocto_crates_inc_is_what_cargo_update_recipe_crates_writes_from_cargo_lock() {
    let rel = "contrib/yocto/recipes-benchmark/flashscope/flashscope-crates.inc";
    let lock = read("Cargo.lock");
    let want = crates_inc(&lock);
    if std::env::var("FLASHSCOPE_UPDATE_CRATES_INC").is_ok_and(|v| v == "1") {
        std::fs::write(root().join(rel), &want).unwrap();
    }
    let registry = lock
        .split("[[package]]")
        .filter(|b| b.contains("source = \"registry+"))
        .count();
    assert!(
        registry > 100,
        "only {registry} crates.io packages in Cargo.lock"
    );
    assert_eq!(want.matches("crate://crates.io/").count(), registry);
    assert_eq!(want.matches(".sha256sum] = ").count(), registry);
    let have = std::fs::read_to_string(root().join(rel)).unwrap_or_default();
    if have != want {
        let first = have
            .lines()
            .zip(want.lines())
            .find(|(h, w)| h != w)
            .map(|(h, w)| format!("have: {h}\nwant: {w}"))
            .unwrap_or_else(|| "one is a prefix of the other".into());
        panic!(
            "{rel} does not match Cargo.lock ({first}); regenerate it:\n  \
             FLASHSCOPE_UPDATE_CRATES_INC=1 cargo test --test e2e packaging::"
        );
    }
}

fn md5(rel: &str) -> String {
    let out = Command::new("md5sum")
        .arg(root().join(rel))
        .output()
        .unwrap();
    assert!(out.status.success(), "md5sum {rel}");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

fn sha256(rel: &str) -> String {
    use sha2::Digest;
    let bytes = std::fs::read(root().join(rel)).unwrap();
    sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The licence files Cargo.toml's licence names (MIT OR Apache-2.0).
const LICENCE_FILES: [&str; 2] = ["LICENSE-MIT", "LICENSE-APACHE"];

#[test]
fn the_recipes_carry_cargo_tomls_version_and_licence() {
    let version = package_field("version");
    let licence = package_field("license");
    assert_eq!(
        licence, "MIT OR Apache-2.0",
        "update the recipes' licences too"
    );
    for f in LICENCE_FILES {
        assert!(root().join(f).is_file(), "{f} is missing");
    }

    // Yocto: the version is in the recipe's file name.
    let dir = "contrib/yocto/recipes-benchmark/flashscope";
    let recipes: Vec<String> = std::fs::read_dir(root().join(dir))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bb"))
        .collect();
    assert_eq!(recipes, vec![format!("flashscope_{version}.bb")]);
    let bb = read(&format!("{dir}/{}", recipes[0]));
    assert!(bb.contains("LICENSE = \"MIT | Apache-2.0\"\n"), "{bb}");
    for f in LICENCE_FILES {
        let chk = format!("file://{f};md5={}", md5(f));
        assert!(bb.contains(&chk), "the recipe lacks {chk}");
    }
    for line in [
        "inherit cargo cargo-update-recipe-crates\n",
        "require ${BPN}-crates.inc\n",
        "CARGO_BUILD_FLAGS += \"--config profile.release.strip=false\"\n",
        "export FLASHSCOPE_GEN_DIR = ",
    ] {
        assert!(bb.contains(line), "the recipe lacks {line:?}");
    }

    // Buildroot.
    let pkg = "contrib/buildroot/package/flashscope";
    let mk = read(&format!("{pkg}/flashscope.mk"));
    assert!(
        mk.contains(&format!("\nFLASHSCOPE_VERSION = {version}\n")),
        "{mk}"
    );
    assert!(
        mk.contains(&format!(
            "\nFLASHSCOPE_LICENSE = {}\n",
            licence.replace(" OR ", " or ")
        )),
        "{mk}"
    );
    assert!(mk.contains(&format!(
        "\nFLASHSCOPE_LICENSE_FILES = {}\n",
        LICENCE_FILES.join(" ")
    )));
    assert!(mk.contains("$(eval $(cargo-package))"));
    assert!(mk.contains("FLASHSCOPE_CARGO_ENV = FLASHSCOPE_GEN_DIR="));
    let hash = read(&format!("{pkg}/flashscope.hash"));
    for f in LICENCE_FILES {
        let line = format!("sha256  {}  {f}", sha256(f));
        assert!(hash.contains(&line), "flashscope.hash lacks {line}");
    }
    let config = read(&format!("{pkg}/Config.in"));
    assert!(config.contains("select BR2_PACKAGE_HOST_RUSTC\n"));

    // Both install the four generated files (the FLASHSCOPE_GEN_DIR contract).
    for f in [
        "gen/flashscope.1",
        "gen/completions/flashscope.bash",
        "gen/completions/_flashscope",
        "gen/completions/flashscope.fish",
    ] {
        assert!(mk.contains(f), "flashscope.mk does not install {f}");
        assert!(bb.contains(f), "the Yocto recipe does not install {f}");
    }
}
