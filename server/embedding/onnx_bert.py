"""A sentence-transformers BERT model (all-MiniLM-L6-v2) as an ONNX graph, built without torch.

Exporters (torch.onnx, optimum, sentence-transformers' backend="onnx") trace the PyTorch model,
so they need torch, a ~0.9 GB install, only to write a file once. The model is small and plain:
word + position + type embeddings, N post-LayerNorm encoder layers, mean pooling over the
attention mask, L2 normalisation. This module writes exactly that graph with the `onnx`
helpers, the weights read from model.safetensors with numpy, so a server can run the local
embedder on ONNX Runtime with no torch installed. The bench (`python -m bench embedding`)
checks its vectors against sentence-transformers on the real model (cosine >= 0.9999).

The file is built once into the data dir (`export`), named by a fingerprint of the weights,
the model's configuration and GRAPH_VERSION, so a new model or a change here builds a new one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

GRAPH_VERSION = 1
OPSET = 17  # LayerNormalization is a standard op from 17 on
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "sentence_embedding"


class ModelFormatError(ValueError):
    """The model directory is not a BERT sentence-transformer this builder understands."""


def read_config(model_dir: Path) -> dict[str, Any]:
    """The few facts the graph needs, from the model folder's config files."""
    try:
        config = json.loads((model_dir / "config.json").read_text())
    except (OSError, ValueError) as exc:
        raise ModelFormatError(f"no readable config.json in {model_dir}: {exc}") from exc
    if config.get("model_type") != "bert" or config.get("position_embedding_type", "absolute") != "absolute":
        raise ModelFormatError(f"{model_dir} is not a BERT model with absolute positions")
    if config.get("hidden_act", "gelu") != "gelu":
        raise ModelFormatError(f"{model_dir}: activation {config.get('hidden_act')!r} is not supported")
    pooling = _json(model_dir / "1_Pooling" / "config.json", {"pooling_mode_mean_tokens": True})
    if not pooling.get("pooling_mode_mean_tokens") or any(
        pooling.get(k)
        for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
    ):
        raise ModelFormatError(f"{model_dir}: only mean pooling is supported")
    st = _json(model_dir / "sentence_bert_config.json", {})
    return {
        "hidden": int(config["hidden_size"]),
        "heads": int(config["num_attention_heads"]),
        "layers": int(config["num_hidden_layers"]),
        "eps": float(config.get("layer_norm_eps", 1e-12)),
        "max_seq_length": int(st.get("max_seq_length") or config.get("max_position_embeddings", 512)),
    }


def _json(path: Path, default: dict) -> dict:
    try:
        return json.loads(path.read_text())
    except OSError:
        return default


def fingerprint(model_dir: Path) -> str:
    """Changes when the weights, the configuration or this builder change."""
    h = hashlib.sha256(f"graph v{GRAPH_VERSION}".encode())
    for name in ("config.json", "sentence_bert_config.json", "1_Pooling/config.json", "model.safetensors"):
        path = model_dir / name
        if path.is_file():
            h.update(name.encode())
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()[:16]


def build(model_dir: Path) -> onnx.ModelProto:  # noqa: F821 (onnx is imported lazily)
    """The graph: token ids -> L2-normalised mean-pooled sentence embedding."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from safetensors.numpy import load_file

    cfg = read_config(model_dir)
    try:
        weights = load_file(str(model_dir / "model.safetensors"))
    except Exception as exc:
        raise ModelFormatError(f"cannot read {model_dir / 'model.safetensors'}: {exc}") from exc
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""
    hidden, heads = cfg["hidden"], cfg["heads"]
    head_dim = hidden // heads
    nodes: list = []
    inits: list = []
    counter = iter(range(1_000_000))

    def w(name: str, transpose: bool = False) -> str:
        key = prefix + name
        if key not in weights:
            raise ModelFormatError(f"{model_dir}: weight {key} missing")
        array = weights[key].astype(np.float32)
        inits.append(numpy_helper.from_array(np.ascontiguousarray(array.T if transpose else array), key))
        return key

    def const(value, dtype=np.float32) -> str:
        name = f"const_{next(counter)}"
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def op(kind: str, inputs: list[str], **attrs) -> str:
        out = f"{kind.lower()}_{next(counter)}"
        nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def layer_norm(x: str, name: str) -> str:
        return op("LayerNormalization", [x, w(f"{name}.weight"), w(f"{name}.bias")], axis=-1, epsilon=cfg["eps"])

    def dense(x: str, name: str) -> str:
        return op("Add", [op("MatMul", [x, w(f"{name}.weight", transpose=True)]), w(f"{name}.bias")])

    # embeddings
    seq_len = op("Gather", [op("Shape", ["input_ids"]), const(1, np.int64)], axis=0)
    positions = op("Unsqueeze", [op("Range", [const(0, np.int64), seq_len, const(1, np.int64)]), const([0], np.int64)])
    x = op(
        "Add",
        [
            op(
                "Add",
                [
                    op("Gather", [w("embeddings.word_embeddings.weight"), "input_ids"]),
                    op("Gather", [w("embeddings.position_embeddings.weight"), positions]),
                ],
            ),
            op("Gather", [w("embeddings.token_type_embeddings.weight"), "token_type_ids"]),
        ],
    )
    x = layer_norm(x, "embeddings.LayerNorm")

    # attention mask: 0 where attended, a large negative number on padding, as [B, 1, 1, S]
    mask = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    additive = op("Mul", [op("Sub", [const(1.0), mask]), const(-10000.0)])
    additive = op("Unsqueeze", [additive, const([1, 2], np.int64)])
    heads_shape = const([0, 0, heads, head_dim], np.int64)
    merged_shape = const([0, 0, hidden], np.int64)
    scale = const(1.0 / math.sqrt(head_dim))

    for i in range(cfg["layers"]):
        base = f"encoder.layer.{i}"

        def split(name: str, perm: list[int]) -> str:
            return op("Transpose", [op("Reshape", [dense(x, f"{base}.attention.self.{name}"), heads_shape])], perm=perm)

        q = split("query", [0, 2, 1, 3])  # [B, h, S, d]
        k = split("key", [0, 2, 3, 1])  # [B, h, d, S]
        v = split("value", [0, 2, 1, 3])  # [B, h, S, d]
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), additive])
        context = op("MatMul", [op("Softmax", [scores], axis=-1), v])
        context = op("Reshape", [op("Transpose", [context], perm=[0, 2, 1, 3]), merged_shape])
        x = layer_norm(
            op("Add", [dense(context, f"{base}.attention.output.dense"), x]), f"{base}.attention.output.LayerNorm"
        )
        inner = dense(x, f"{base}.intermediate.dense")
        gelu = op(
            "Mul",
            [
                op("Mul", [inner, const(0.5)]),
                op("Add", [op("Erf", [op("Mul", [inner, const(1.0 / math.sqrt(2.0))])]), const(1.0)]),
            ],
        )
        x = layer_norm(op("Add", [dense(gelu, f"{base}.output.dense"), x]), f"{base}.output.LayerNorm")

    # mean pooling over attended tokens, then L2 normalisation (sentence-transformers' Normalize)
    mask3 = op("Unsqueeze", [mask, const([2], np.int64)])
    summed = op("ReduceSum", [op("Mul", [x, mask3]), const([1], np.int64)], keepdims=0)
    count = op("Max", [op("ReduceSum", [mask3, const([1], np.int64)], keepdims=0), const(1e-9)])
    mean = op("Div", [summed, count])
    norm = op("Max", [op("ReduceL2", [mean], axes=[1], keepdims=1), const(1e-12)])
    nodes.append(helper.make_node("Div", [mean, norm], [OUTPUT]))

    graph = helper.make_graph(
        nodes,
        "sentence_transformer",
        [helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"]) for name in INPUTS],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", hidden])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="memorywiki")
    model.ir_version = 8  # readable by any onnxruntime >= 1.14
    onnx.checker.check_model(model)
    return model


# onnxruntime's quantizer logs on the root logger: at INFO, a line for every MatMul it leaves
# in float (the attention products, whose inputs are no weights) and every tensor it sets no
# parameters for (two dozen lines for MiniLM, shown since the server logs at INFO); at WARNING,
# advice to run its pre-processing (symbolic shape inference and graph optimisation). That would
# rewrite the graph before the weights are quantized, so int8 vectors would change under the
# same space name; the graph built here is already plain and fully shaped, and dynamic
# quantization needs neither step. Its other warnings and errors pass.
PREPROCESSING_ADVICE = "Please consider to run pre-processing before quantization"
_QUANTIZER = os.path.join("onnxruntime", "quantization", "")


class _QuietQuantizer(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith(PREPROCESSING_ADVICE):
            return False
        return record.levelno >= logging.WARNING or _QUANTIZER not in record.pathname


@contextlib.contextmanager
def _quiet_quantizer():
    """The quantizer's progress notes and its advice dropped from the log (every other record
    passes). It logs through logging.info() and .warning(), which configure the root logger (a
    stderr handler, for good) when it has no handler: a NullHandler stands in meanwhile so that
    never happens here."""
    root = logging.getLogger()
    drop = _QuietQuantizer()
    stand_in = logging.NullHandler() if not root.handlers else None
    root.addFilter(drop)
    if stand_in is not None:
        root.addHandler(stand_in)
    try:
        yield
    finally:
        root.removeFilter(drop)
        if stand_in is not None:
            root.removeHandler(stand_in)


def export(model_dir: Path, target_dir: Path, *, name: str | None = None, quantize: bool = False) -> Path:
    """The model's ONNX file under target_dir, built on the first call only.

    Written to a temporary file and renamed, so a crash or a second process exporting at
    the same time never leaves a half-written model behind.
    """
    model_dir = Path(model_dir)
    stem = (name or model_dir.name).removesuffix("-int8")
    path = Path(target_dir) / f"{stem}-{fingerprint(model_dir)}{'-int8' if quantize else ''}.onnx"
    if path.is_file():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    import onnx

    fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=path.parent)
    os.close(fd)
    try:
        onnx.save(build(model_dir), tmp)
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            fp32 = tmp
            fd, tmp = tempfile.mkstemp(prefix=".export-", suffix=".onnx", dir=path.parent)
            os.close(fd)
            try:
                with _quiet_quantizer():
                    quantize_dynamic(fp32, tmp, weight_type=QuantType.QInt8)
            finally:
                os.unlink(fp32)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
