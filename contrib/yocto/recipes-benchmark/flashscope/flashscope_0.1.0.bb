SUMMARY = "Measure flash storage: geometry, real capacity, real speed"
DESCRIPTION = "flashscope measures flash storage (SD and microSD cards, eMMC, USB \
sticks): its real capacity (fake cards), its hidden geometry (erase block, page, open \
erase blocks), its real speed and wear, and the partition and mkfs lines that fit it. \
Every command also runs on a built-in simulated card (sim:PRESET)."
LICENSE = "MIT | Apache-2.0"
LIC_FILES_CHKSUM = "file://LICENSE-MIT;md5=2688a17c9631b74567eb21eb5181a30d \
                    file://LICENSE-APACHE;md5=3b83ef96387f14655fc854ddc3c6bd57"

# No public git URL yet: point FLASHSCOPE_GIT_URL at your copy of the repository and set
# SRCREV to the commit this recipe came from, whose Cargo.lock flashscope-crates.inc
# lists (in local.conf or a bbappend, docs/board.md; left unset, bitbake stops and asks).
FLASHSCOPE_GIT_URL ??= "git:///srv/git/flashscope.git;protocol=file"
SRC_URI = "${FLASHSCOPE_GIT_URL};branch=main"
# scarthgap's git fetcher unpacks into ${WORKDIR}/git.
S = "${WORKDIR}/git"

inherit cargo cargo-update-recipe-crates

require ${BPN}-crates.inc

# Keep the symbols in the build: the release profile strips, and Yocto strips into
# ${PN}-dbg itself (QA check already-stripped).
CARGO_BUILD_FLAGS += "--config profile.release.strip=false"
# The io-uring crate's kernel bindings are checked for 32-bit ARM by hand (see the
# source's .cargo/config.toml, which names only the Rust project's ARM targets).
RUSTFLAGS:append:arm = " --cfg io_uring_skip_arch_check"

# build.rs writes the man page and the shell completions there (the target binary
# cannot run on the build machine to print them).
export FLASHSCOPE_GEN_DIR = "${B}/gen"

do_install:append() {
    install -D -m 0644 ${B}/gen/flashscope.1 ${D}${mandir}/man1/flashscope.1
    install -D -m 0644 ${B}/gen/completions/flashscope.bash ${D}${datadir}/bash-completion/completions/flashscope
    install -D -m 0644 ${B}/gen/completions/_flashscope ${D}${datadir}/zsh/site-functions/_flashscope
    install -D -m 0644 ${B}/gen/completions/flashscope.fish ${D}${datadir}/fish/vendor_completions.d/flashscope.fish
}

FILES:${PN} += "${datadir}/bash-completion ${datadir}/zsh ${datadir}/fish"
