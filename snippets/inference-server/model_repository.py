# /// script
# requires-python = ">=3.10"
# dependencies = ["torch", "triton", "numpy"]
#
# [tool.snippet]
# gpu = { skip = "writes and reads files; no server runs and nothing runs on a GPU", skip-zh = "只写文件、读文件；不启动服务器，也不在 GPU 上运行任何东西" }
# cpu = { interpreter = false }
# files = ["python_backend_model.py"]
# ///
"""An Inference Server model repository, written and read back: no server is started.

    python model_repository.py

Writes <tmp>/model_repository/add_one/{config.pbtxt, 1/model.py} in a temporary folder, parses
config.pbtxt (protobuf text format, the subset a model configuration uses), prints the tree and
the parsed configuration, and checks the layout rules of the server's model repository docs.
model.py is python_backend_model.py when that file sits beside this one, else a stub.
"""

import re
import tempfile
from pathlib import Path

# --8<-- [start:config]
CONFIG = """
name: "add_one"
backend: "python"
max_batch_size: 8
input [
  {
    name: "INPUT0"
    data_type: TYPE_FP32
    dims: [ -1 ]
  }
]
output [
  {
    name: "OUTPUT0"
    data_type: TYPE_FP32
    dims: [ -1 ]
  }
]
instance_group [
  {
    count: 1
    kind: KIND_GPU
  }
]
dynamic_batching {
  max_queue_delay_microseconds: 100
}
"""
# --8<-- [end:config]


# --8<-- [start:write]
def write_repository(root: Path) -> Path:
    repo = root / "model_repository"
    model = repo / "add_one"  # (1)!
    (model / "1").mkdir(parents=True)  # (2)!
    (model / "config.pbtxt").write_text(CONFIG.lstrip(), encoding="utf-8")
    source = Path(__file__).with_name("python_backend_model.py")
    stub = "class TritonPythonModel:  # see python_backend_model.py\n    ...\n"
    text = source.read_text(encoding="utf-8") if source.is_file() else stub
    (model / "1" / "model.py").write_text(text, encoding="utf-8")  # (3)!
    return repo


def tree(path: Path, prefix: str = "") -> list[str]:
    """The folder drawn like `tree`: files first, then folders."""
    children = sorted(path.iterdir(), key=lambda p: (p.is_dir(), p.name))
    lines = []
    for i, child in enumerate(children):
        last = i == len(children) - 1
        lines.append(f"{prefix}{'└── ' if last else '├── '}{child.name}{'/' * child.is_dir()}")
        if child.is_dir():
            lines += tree(child, prefix + ("    " if last else "│   "))
    return lines


# --8<-- [end:write]


# --8<-- [start:parse]
TOKEN = re.compile(r'\s*(?:#[^\n]*|("(?:[^"\\]|\\.)*")|([{}\[\]:,])|([^\s{}\[\]:,"#]+))?')


def tokens(text: str) -> list[str]:
    found, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read config.pbtxt at {text[pos : pos + 20]!r}")
        found += [t for t in m.groups() if t is not None]
        pos = m.end()
    return found


def parse_message(toks: list[str], i: int, end: str | None) -> tuple[dict, int]:
    """Fields until `end` ('}' or None for the whole file). Repeated fields become lists."""
    fields: dict = {}
    while i < len(toks) and toks[i] != end:
        name = toks[i]
        i += 1 + (toks[i + 1] == ":")  # (1)!
        value, i = parse_value(toks, i)
        if name in fields:  # a field written twice is a repeated field
            fields[name] = (
                [*fields[name], value] if isinstance(fields[name], list) else [fields[name], value]
            )
        else:
            fields[name] = value
    if end is not None and i >= len(toks):
        raise ValueError(f"config.pbtxt ends before the closing {end!r}")
    return fields, i + 1


def parse_value(toks: list[str], i: int) -> tuple[object, int]:
    if toks[i] == "{":
        return parse_message(toks, i + 1, "}")
    if toks[i] == "[":  # (2)!
        items, i = [], i + 1
        while toks[i] != "]":
            item, i = parse_value(toks, i)
            items.append(item)
            i += toks[i] == ","
        return items, i + 1
    tok = toks[i]
    if tok.startswith('"'):
        return tok[1:-1], i + 1
    if re.fullmatch(r"-?\d+", tok):
        return int(tok), i + 1
    return tok, i + 1  # an enum value such as TYPE_FP32 or KIND_GPU


# --8<-- [end:parse]


# --8<-- [start:check]
def check_layout(repo: Path) -> dict:
    """The rules of the server's model repository docs that this one model touches."""
    (model,) = [p for p in repo.iterdir() if p.is_dir()]
    config, _ = parse_message(tokens((model / "config.pbtxt").read_text(encoding="utf-8")), 0, None)
    assert config.get("name", model.name) == model.name, "name must match the folder"  # (1)!
    versions = [p for p in model.iterdir() if p.is_dir() and re.fullmatch(r"[1-9]\d*", p.name)]
    assert versions, "at least one numeric version folder (names starting with 0 are ignored)"
    if config["backend"] == "python":  # (2)!
        for version in versions:
            assert "class TritonPythonModel" in (version / "model.py").read_text(encoding="utf-8")
    if "dynamic_batching" in config:  # (3)!
        assert config["max_batch_size"] >= 1, "dynamic batching needs max_batch_size >= 1"
    for tensor in config["input"] + config["output"]:
        assert tensor["dims"], "the empty shape [ ] is not allowed"
    return config


with tempfile.TemporaryDirectory() as tmp:
    repo = write_repository(Path(tmp))
    print("model repository:")
    print("\n".join([f"{repo.name}/", *tree(repo)]))
    config = check_layout(repo)
# --8<-- [end:check]

# --8<-- [start:print]
print(
    f"config: name={config['name']} backend={config['backend']} max_batch_size={config['max_batch_size']}"
)
for kind in ("input", "output"):
    for t in config[kind]:
        print(f"config {kind}: {t['name']} {t['data_type']} dims {t['dims']}")
group = config["instance_group"][0]
print(f"config instance_group: {group['count']} x {group['kind']}")
print(f"config dynamic_batching: {config['dynamic_batching']}")
# --8<-- [end:print]

assert config["input"][0] == {"name": "INPUT0", "data_type": "TYPE_FP32", "dims": [-1]}
assert tokens('a: "x y" # comment\nb [1, -2]') == ["a", ":", '"x y"', "b", "[", "1", ",", "-2", "]"]
nested, _ = parse_message(tokens('p { key: "K" value { string_value: "no" } }'), 0, None)
assert nested == {"p": {"key": "K", "value": {"string_value": "no"}}}, nested
twice, _ = parse_message(tokens("x: 1 x: 2 x: 3"), 0, None)
assert twice == {"x": [1, 2, 3]}, twice
for bad in ("a: {", 'a: "unterminated'):
    try:
        parse_message(tokens(bad), 0, None)
    except (ValueError, IndexError):
        pass
    else:
        raise AssertionError(f"parsed {bad!r} without an error")
print("model_repository: all checks passed")
