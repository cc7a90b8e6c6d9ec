# tests/fuzz: libFuzzer targets for everything that decodes bytes from the
# network.  Built with clang (FUZZ_CC) under ASan + UBSan, seeded by
# gen_corpus, and run for FUZZ_TIME seconds by `make check` (fuzz-proto).
# The corpus grows in $(O)/tests/fuzz/corpus across runs; inputs that once
# crashed a decoder live in tests/fuzz/regress and seed every run (their
# first byte selects the decoder, as fuzz_proto.c numbers them today).

FUZZ_CC ?= clang
FUZZ_TIME ?= 30
FUZZ_CFLAGS := -std=gnu11 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all \
	-Iinclude $(LIBCLF_INCLUDES) -Itests/fuzz
# What the decoders need: the codec, the type codec and the error text.
FUZZ_LIB_SRCS := libclf/engine/error.c libclf/engine/falls.c \
	libclf/engine/falls_algebra.c libclf/engine/falls_compact.c \
	libclf/engine/type.c libclf/engine/type_codec.c libclf/runtime/proto.c \
	libclf/runtime/proto_meta.c libclf/runtime/proto_lock.c \
	libclf/runtime/proto_io.c libclf/runtime/proto_link.c \
	libclf/runtime/proto_decl.c libclf/runtime/proto_msgs.c
FUZZ_OBJS := $(FUZZ_LIB_SRCS:%.c=$(O)/fuzz/%.o)
FUZZ_DIR := $(O)/tests/fuzz

$(O)/fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(FUZZ_DIR)/fuzz_proto: tests/fuzz/fuzz_proto.c tests/fuzz/proto_codecs.h \
		$(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS)

$(FUZZ_DIR)/gen_corpus: tests/fuzz/gen_corpus.c tests/fuzz/proto_codecs.h \
		$(O)/libclf.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(LIBCLF_INCLUDES) -Itests/fuzz -o $@ $< $(O)/libclf.a \
		$(LIBCLF_EXTRA_LIBS) $(ALL_LDFLAGS)

.PHONY: fuzz-proto
fuzz-proto: $(FUZZ_DIR)/fuzz_proto $(FUZZ_DIR)/gen_corpus
	@mkdir -p $(FUZZ_DIR)/corpus
	$(FUZZ_DIR)/gen_corpus $(FUZZ_DIR)/corpus
	$(FUZZ_DIR)/fuzz_proto -max_total_time=$(FUZZ_TIME) -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 $(FUZZ_DIR)/corpus \
		tests/fuzz/regress

CHECK_TARGETS += fuzz-proto
