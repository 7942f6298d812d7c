################################################################################
#
# flashscope
#
################################################################################

FLASHSCOPE_VERSION = 0.1.0
FLASHSCOPE_SOURCE = flashscope-$(FLASHSCOPE_VERSION).tar.gz
# No public download site yet: a local directory with the tarball of a checkout.
FLASHSCOPE_SITE = file://$(call qstrip,$(BR2_PACKAGE_FLASHSCOPE_TARBALL_DIR))
FLASHSCOPE_LICENSE = MIT or Apache-2.0
FLASHSCOPE_LICENSE_FILES = LICENSE-MIT LICENSE-APACHE
# The tarball is made from a checkout, so its (vendored) hash cannot ship in
# flashscope.hash: utils/add-custom-hashes computes it for the files listed here and
# writes it to BR2_GLOBAL_PATCH_DIR/flashscope/flashscope.hash (docs/board.md).
BR_NO_CHECK_HASH_FOR += $(FLASHSCOPE_SOURCE)

# build.rs writes the man page and the shell completions into FLASHSCOPE_GEN_DIR (the
# target binary cannot run on the build machine to print them).
FLASHSCOPE_CARGO_ENV = FLASHSCOPE_GEN_DIR=$(@D)/gen

# The io-uring crate's kernel bindings are checked for 32-bit ARM by hand (see the
# source's .cargo/config.toml); Buildroot's own ARM link flag is kept.
ifeq ($(NORMALIZED_ARCH),arm)
FLASHSCOPE_CARGO_ENV += \
	CARGO_TARGET_$(call UPPERCASE,$(RUSTC_TARGET_NAME))_RUSTFLAGS="-Clink-arg=-Wl,--allow-multiple-definition --cfg io_uring_skip_arch_check"
endif

define FLASHSCOPE_INSTALL_MAN_PAGE
	$(INSTALL) -D -m 0644 $(@D)/gen/flashscope.1 \
		$(TARGET_DIR)/usr/share/man/man1/flashscope.1
endef
FLASHSCOPE_POST_INSTALL_TARGET_HOOKS += FLASHSCOPE_INSTALL_MAN_PAGE

ifeq ($(BR2_PACKAGE_BASH_COMPLETION),y)
define FLASHSCOPE_INSTALL_BASH_COMPLETION
	$(INSTALL) -D -m 0644 $(@D)/gen/completions/flashscope.bash \
		$(TARGET_DIR)/usr/share/bash-completion/completions/flashscope
endef
FLASHSCOPE_POST_INSTALL_TARGET_HOOKS += FLASHSCOPE_INSTALL_BASH_COMPLETION
endif

ifeq ($(BR2_PACKAGE_ZSH),y)
define FLASHSCOPE_INSTALL_ZSH_COMPLETION
	$(INSTALL) -D -m 0644 $(@D)/gen/completions/_flashscope \
		$(TARGET_DIR)/usr/share/zsh/site-functions/_flashscope
endef
FLASHSCOPE_POST_INSTALL_TARGET_HOOKS += FLASHSCOPE_INSTALL_ZSH_COMPLETION
endif

ifeq ($(BR2_PACKAGE_FISH),y)
define FLASHSCOPE_INSTALL_FISH_COMPLETION
	$(INSTALL) -D -m 0644 $(@D)/gen/completions/flashscope.fish \
		$(TARGET_DIR)/usr/share/fish/vendor_completions.d/flashscope.fish
endef
FLASHSCOPE_POST_INSTALL_TARGET_HOOKS += FLASHSCOPE_INSTALL_FISH_COMPLETION
endif

$(eval $(cargo-package))
