"""A tiny sentence-transformers BERT model that tests build themselves (no download, no torch).

Same file layout as the packaged all-MiniLM-L6-v2 (config.json, model.safetensors,
tokenizer.json, sentence_bert_config.json, 1_Pooling/config.json), with random weights, a
40-word vocabulary and 2 layers of width 32, so the ONNX path runs in milliseconds. With
`multilingual=True` it is shaped like paraphrase-multilingual-MiniLM-L12-v2 instead: the same BERT
body (width 48 here) under an XLM-R SentencePiece tokenizer (a Unigram model over pieces of
several scripts, `<s> ... </s>`, <pad> at id 1), a tokenizer the WordPiece path never sees. Its
vectors mean nothing; what the tests check is that the ONNX graph computes what BERT +
mean pooling + normalisation compute (`reference_embed`, plain numpy, written from the
model's definition rather than from server/embedding/onnx_bert.py).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

WORDS = (
    "cat cats purr rocket rockets fuel oxygen the a dog dogs bark when content need and of "
    "engine launch moon orbit sleep warm sun milk fish tail space ship crew food water"
).split()
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "##s", "##ing", "##ed"]
HIDDEN, HEADS, LAYERS, INTERMEDIATE, MAX_LEN = 32, 4, 2, 64, 16
MULTILINGUAL_HIDDEN = 48


# XLM-R's special pieces and their ids, then pieces of several scripts (with SentencePiece's
# word-start mark), each with a log probability for the Unigram model.
PIECES = [
    "<s>",
    "<pad>",
    "</s>",
    "<unk>",
    *(
        "▁cat ▁cats ▁the ▁rocket ▁fuel s ▁moon ▁sea ▁قطط ▁القطط ▁صاروخ ▁وقود ال ▁猫 猫 咪 火箭 燃料 ▁ねこ ねこ "
        "▁ロケット ▁고양이 고양이 ▁로켓 이 는 ▁кошка ▁ракета ▁gato ▁cohete"
    ).split(),
]
SPECIAL = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}


def _sentencepiece_tokenizer():
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    scores = [(p, 0.0) for p in PIECES[:4]] + [(p, -1.0 - 0.1 * i) for i, p in enumerate(PIECES[4:])]
    # every single character of the pieces too, so nothing in those scripts is <unk>
    chars = sorted({c for p in PIECES[4:] for c in p} - set(PIECES))
    scores += [(c, -10.0) for c in chars]
    tokenizer = Tokenizer(models.Unigram(scores, unk_id=SPECIAL["<unk>"]))
    tokenizer.normalizer = normalizers.NFKC()
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        pair="<s> $A </s> </s> $B </s>",
        special_tokens=[("<s>", SPECIAL["<s>"]), ("</s>", SPECIAL["</s>"])],
    )
    return tokenizer, len(scores)


def make_tiny_bert(folder: Path, seed: int = 0, model_type: str = "bert", *, multilingual: bool = False) -> Path:
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "1_Pooling").mkdir(exist_ok=True)
    hidden = MULTILINGUAL_HIDDEN if multilingual else HIDDEN
    if multilingual:
        tokenizer, vocab_size = _sentencepiece_tokenizer()
    else:
        tokenizer, vocab_size = (
            Tokenizer(models.WordPiece({t: i for i, t in enumerate(VOCAB)}, unk_token="[UNK]")),
            len(VOCAB),
        )
    config = {
        "architectures": ["BertModel"],
        "model_type": model_type,
        "hidden_size": hidden,
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "intermediate_size": INTERMEDIATE,
        "hidden_act": "gelu",
        "layer_norm_eps": 1e-12,
        "max_position_embeddings": 64,
        "type_vocab_size": 2,
        "vocab_size": vocab_size,
        "position_embedding_type": "absolute",
        **({"tokenizer_class": "XLMRobertaTokenizer", "pad_token_id": SPECIAL["<pad>"]} if multilingual else {}),
    }
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": MAX_LEN, "do_lower_case": False}))
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": hidden, "pooling_mode_mean_tokens": True})
    )

    rng = np.random.default_rng(seed)

    def r(*shape):
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    weights = {
        "embeddings.word_embeddings.weight": r(vocab_size, hidden),
        "embeddings.position_embeddings.weight": r(64, hidden),
        "embeddings.token_type_embeddings.weight": r(2, hidden),
        "embeddings.LayerNorm.weight": 1 + r(hidden),
        "embeddings.LayerNorm.bias": r(hidden),
    }
    for i in range(LAYERS):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            weights[p + f"attention.self.{name}.weight"] = r(hidden, hidden)
            weights[p + f"attention.self.{name}.bias"] = r(hidden)
        weights[p + "attention.output.dense.weight"] = r(hidden, hidden)
        weights[p + "attention.output.dense.bias"] = r(hidden)
        weights[p + "attention.output.LayerNorm.weight"] = 1 + r(hidden)
        weights[p + "attention.output.LayerNorm.bias"] = r(hidden)
        weights[p + "intermediate.dense.weight"] = r(INTERMEDIATE, hidden)
        weights[p + "intermediate.dense.bias"] = r(INTERMEDIATE)
        weights[p + "output.dense.weight"] = r(hidden, INTERMEDIATE)
        weights[p + "output.dense.bias"] = r(hidden)
        weights[p + "output.LayerNorm.weight"] = 1 + r(hidden)
        weights[p + "output.LayerNorm.bias"] = r(hidden)
    save_file(weights, str(folder / "model.safetensors"))

    if not multilingual:
        tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tokenizer.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", VOCAB.index("[CLS]")), ("[SEP]", VOCAB.index("[SEP]"))],
        )
    tokenizer.save(str(folder / "tokenizer.json"))
    return folder


def reference_embed(folder: Path, texts: list[str]) -> np.ndarray:
    """BERT forward pass in numpy, one text at a time (no padding at all), mean pooled and
    L2-normalised: what sentence-transformers computes for this model."""
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    w = {k: v.astype(np.float64) for k, v in load_file(str(folder / "model.safetensors")).items()}
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_LEN)
    hidden = json.loads((folder / "config.json").read_text())["hidden_size"]

    def norm(x, name):
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-12) * w[name + ".weight"] + w[name + ".bias"]

    def linear(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    erf = np.vectorize(math.erf)
    out = []
    for text in texts:
        ids = tokenizer.encode(text).ids
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = norm(x, "embeddings.LayerNorm")
        d = hidden // HEADS
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            q, k, v = (
                linear(x, p + f"attention.self.{n}").reshape(len(ids), HEADS, d).transpose(1, 0, 2)
                for n in ("query", "key", "value")
            )
            scores = q @ k.transpose(0, 2, 1) / math.sqrt(d)
            probs = np.exp(scores - scores.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(1, 0, 2).reshape(len(ids), hidden)
            x = norm(linear(context, p + "attention.output.dense") + x, p + "attention.output.LayerNorm")
            h = linear(x, p + "intermediate.dense")
            h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
            x = norm(linear(h, p + "output.dense") + x, p + "output.LayerNorm")
        mean = x.mean(0)
        out.append(mean / np.linalg.norm(mean))
    return np.array(out)
