#!/usr/bin/python3
"""tests/checkpoint/check_safetensors.py OUT MASTER V T L H C — an independent reader of what
`zero-ckpt export --format safetensors` wrote, in the Python standard library only (struct, json).

OUT is the export directory, MASTER the same checkpoint's master weights as `zero-ckpt consolidate`
wrote them (raw little-endian FP32, parameters end to end in this project's canonical order and
nn.Linear [out, in] layout), V T L H C the GPT's vocabulary, context, layers, heads and width.
Checks, from the published safetensors layout and Hugging Face's GPT-2 conventions (not from this
project's C++): the 8-byte little-endian header length, the header's JSON and its padding to a
multiple of 8, __metadata__, every tensor's name, dtype and shape (the four Conv1D weights [in,
out]), data offsets packed end to end and exactly filling the file, every value's bytes equal to
MASTER's (transposed for Conv1D), and config.json's fields. Prints "ok" and exits 0, or exits 1
with the first failure.
"""
import json
import struct
import sys


def fail(message):
    print("check_safetensors: " + message)
    sys.exit(1)


def expect(cond, message):
    if not cond:
        fail(message)


def expected_tensors(V, T, L, C):
    """(Hugging Face name, our canonical shape, is Conv1D) in our canonical order."""
    out = [("wte.weight", [V, C], False), ("wpe.weight", [T, C], False)]
    for l in range(L):
        h = "h.%d." % l
        out += [(h + "ln_1.weight", [C], False), (h + "ln_1.bias", [C], False),
                (h + "attn.c_attn.weight", [3 * C, C], True), (h + "attn.c_attn.bias", [3 * C], False),
                (h + "attn.c_proj.weight", [C, C], True), (h + "attn.c_proj.bias", [C], False),
                (h + "ln_2.weight", [C], False), (h + "ln_2.bias", [C], False),
                (h + "mlp.c_fc.weight", [4 * C, C], True), (h + "mlp.c_fc.bias", [4 * C], False),
                (h + "mlp.c_proj.weight", [C, 4 * C], True), (h + "mlp.c_proj.bias", [C], False)]
    return out + [("ln_f.weight", [C], False), ("ln_f.bias", [C], False)]


def transpose_bytes(raw, rows, cols):
    """[rows, cols] of 4-byte elements -> [cols, rows], moving bytes (exact for any bit pattern)."""
    cells = [raw[4 * i:4 * i + 4] for i in range(rows * cols)]
    return b"".join(cells[r * cols + c] for c in range(cols) for r in range(rows))


def main():
    out, master_path = sys.argv[1], sys.argv[2]
    V, T, L, H, C = (int(x) for x in sys.argv[3:8])
    data = open(out + "/model.safetensors", "rb").read()
    master = open(master_path, "rb").read()

    expect(len(data) >= 8, "shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    expect(n % 8 == 0, "header length %d is not a multiple of 8" % n)
    expect(8 + n <= len(data), "header length %d runs past the file" % n)
    text = data[8:8 + n].decode("utf-8")
    body = text.rstrip(" ")
    expect(body.endswith("}") and len(text) - len(body) < 8, "the header is not JSON padded with < 8 spaces")
    header = json.loads(body)
    buffer = data[8 + n:]

    meta = header.pop("__metadata__", None)
    expect(isinstance(meta, dict), "no __metadata__")
    expect(meta.get("format") == "pt", "__metadata__.format is %r" % meta.get("format"))
    expect(all(isinstance(k, str) and isinstance(v, str) for k, v in meta.items()), "__metadata__ not str->str")

    tensors = expected_tensors(V, T, L, C)
    expect(sorted(header) == sorted(name for name, _, _ in tensors),
           "tensor names differ: %s" % sorted(set(header) ^ set(name for name, _, _ in tensors)))
    spans = sorted((header[name]["data_offsets"], name) for name in header)
    at = 0
    for (begin, end), name in spans:
        expect(begin == at and end >= begin, "%s: offsets [%d, %d) do not follow %d" % (name, begin, end, at))
        at = end
    expect(at == len(buffer), "tensors end at %d, the buffer has %d bytes" % (at, len(buffer)))

    dense = 0
    for name, shape, conv1d in tensors:
        info = header[name]
        hf_shape = [shape[1], shape[0]] if conv1d else shape
        expect(info["dtype"] == "F32", "%s: dtype %s" % (name, info["dtype"]))
        expect(info["shape"] == hf_shape, "%s: shape %s, expected %s" % (name, info["shape"], hf_shape))
        numel = 1
        for d in shape:
            numel *= d
        begin, end = info["data_offsets"]
        expect(end - begin == 4 * numel, "%s: %d bytes for %d elements" % (name, end - begin, numel))
        ours = master[4 * dense:4 * (dense + numel)]
        theirs = buffer[begin:end]
        want = transpose_bytes(ours, shape[0], shape[1]) if conv1d else ours
        expect(theirs == want, "%s: values differ from the consolidated master" % name)
        dense += numel
    expect(4 * dense == len(master), "the master file has %d bytes, the tensors %d" % (len(master), 4 * dense))

    config = json.load(open(out + "/config.json"))
    want = {"model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": V, "n_positions": T,
            "n_ctx": T, "n_embd": C, "n_layer": L, "n_head": H, "activation_function": "gelu_new",
            "layer_norm_epsilon": 1e-05, "tie_word_embeddings": True, "resid_pdrop": 0.0, "embd_pdrop": 0.0,
            "attn_pdrop": 0.0}
    for key, value in want.items():
        expect(config.get(key) == value, "config.json: %s is %r, expected %r" % (key, config.get(key), value))
    print("ok: %d tensors, %d values, header %d bytes" % (len(tensors), dense, n))


if __name__ == "__main__":
    main()
