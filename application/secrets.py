"""Secrets taken out of text before it is stored: what a session digest is built from
(prompts, commands, their output) may hold keys, tokens and passwords, pasted or echoed.

``scrub`` replaces each secret with ``***`` and keeps what names it (``API_KEY=***``,
``Authorization: Bearer ***``, ``https://***@host``), so the digest still says what was
done. It errs towards masking: a mixed-case token of 40 characters or more is masked even
when it is not an AWS secret key. Formats covered (``tests/data/secrets_corpus.txt`` has one or more
of each, and a test checks none survives):

- private keys in PEM (``-----BEGIN … PRIVATE KEY-----`` to its END line, or to the end of
  the text when cut), also JSON-escaped (``\\n``) as in a GCP service account key file;
- cloud keys: AWS access key ids (``AKIA…``, ``ASIA…``) and 40-character secret keys, Google
  API keys (``AIza…``) and OAuth tokens (``ya29.…``), Azure ``AccountKey=`` /
  ``SharedAccessKey=`` / SAS ``sig=`` values, DigitalOcean ``dop_v1_``;
- Git hosts and registries: GitHub ``ghp_ gho_ ghu_ ghs_ ghr_ github_pat_``, GitLab
  ``glpat-`` and its other prefixes, npm ``npm_`` and ``_authToken=``, PyPI ``pypi-``,
  Docker Hub ``dckr_pat_``, Hugging Face ``hf_``;
- chat and payment: Slack ``xox?-`` tokens and webhook URLs, Stripe ``sk_live_ rk_live_
  whsec_`` (and test keys), SendGrid ``SG.``, Twilio ``SK…``;
- model providers: OpenAI ``sk-…``/``sk-proj-…``, Anthropic ``sk-ant-…``;
- JSON Web Tokens (``eyJ….eyJ….…``);
- URL passwords (``scheme://user:pass@host``);
- assignments whose name says secret (``.env`` lines, YAML, JSON, shell ``export``):
  ``*PASSWORD* *SECRET* *TOKEN* *API_KEY* *ACCESS_KEY* *PRIVATE_KEY* *CREDENTIAL*
  *AUTH*`` and the like, ``=`` or ``:``;
- ``Authorization:`` / ``Proxy-Authorization:`` / ``X-Api-Key:`` headers, ``Bearer``/``Basic``
  values, ``curl -u user:pass``, ``--password=… --token …`` flags, ``mysql -pSECRET``.
"""

from __future__ import annotations

import re

from local_mcp_memory.application.redaction import MASK, mask_url

_NAME = (
    r"(?:[A-Za-z0-9_.\-]*?(?:pass(?:w(?:or)?d|phrase)?|secret|token|api[_\-]?key|apikey|access[_\-]?key|"
    r"private[_\-]?key|client[_\-]?key|credential|auth[_\-]?key|session[_\-]?key|signing[_\-]?key|encryption[_\-]?key|"
    r"master[_\-]?key|account[_\-]?key|dsn|connection[_\-]?string)[A-Za-z0-9_.\-]*)"
)

_PEM = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL
)

_PEM_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----")

_TOKENS = tuple(
    re.compile(pattern)
    for pattern in (
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}\b",
        r"\bAIza[0-9A-Za-z_\-]{35}",
        r"\bya29\.[0-9A-Za-z_\-]{20,}",
        r"\bgh[pousr]_[A-Za-z0-9]{20,255}",
        r"\bgithub_pat_[A-Za-z0-9_]{20,255}",
        r"\bgl(?:pat|dt|rt|ptt|ft|imt|agent|oas|cbt|soat|ffct)-[A-Za-z0-9_\-]{16,}",
        r"\bxox[abposrce]-[A-Za-z0-9\-]{8,}",
        r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_\-]+",
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{8,}",
        r"\bwhsec_[A-Za-z0-9]{16,}",
        r"\bsk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{16,}",
        r"\bnpm_[A-Za-z0-9]{30,}",
        r"\bpypi-[A-Za-z0-9_\-]{40,}",
        r"\bdckr_pat_[A-Za-z0-9_\-]{20,}",
        r"\bhf_[A-Za-z0-9]{30,}",
        r"\bdop_v1_[a-f0-9]{40,}",
        r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
        r"\bSK[0-9a-fA-F]{32}\b",
        r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}",
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*",
        # a long base64 value ending in padding (Azure account keys are 88 characters)
        r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{60,}={1,2}(?![A-Za-z0-9/+=])",
    )
)

_LABELLED = (
    # Azure connection strings and SAS URLs
    (re.compile(r"(?i)\b((?:AccountKey|SharedAccessKey|SharedAccessSignature|sig)=)[^;&\s\"']+"), rf"\1{MASK}"),
    # headers: the whole value after the name, whatever scheme
    (
        re.compile(r"(?i)\b((?:proxy-)?authorization|x-api-key|api-key|x-auth-token|private-token|cookie)(\s*:\s*)[^\r\n\"']+"),
        rf"\1\2{MASK}",
    ),
    (re.compile(r"(?i)\b(bearer|basic|token)(\s+)[A-Za-z0-9_\-.=+/~]{8,}"), rf"\1\2{MASK}"),
    # command-line credentials
    (re.compile(r"(?i)((?:^|\s)(?:-u|--user)[\s=]+['\"]?[^\s:'\"]+:)[^\s'\"]+"), rf"\1{MASK}"),
    (re.compile(rf"(?i)((?:^|\s)--{_NAME}[\s=]+)(['\"]?)[^\s'\"]+"), rf"\1\2{MASK}"),
    (re.compile(r"((?:^|\s)-p)([^\s\-][^\s]{3,})"), rf"\1{MASK}"),  # mysql -pSECRET
    (re.compile(r"(?i)(_authToken\s*=\s*)\S+"), rf"\1{MASK}"),
    # assignments: NAME=value, NAME: value, "name": "value" (.env, shell, YAML, JSON, TOML)
    (
        re.compile(rf"(?i)(\b{_NAME}[\"']?\s*(?::=|=|:)\s*)(\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*'|[^\s\"',;&}}\])]+)"),
        rf"\1{MASK}",
    ),
)


_WORD = re.compile(r"[a-z]{3,}")
_BASE64_WORD = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40,}={0,2}(?![A-Za-z0-9/+=])")


def _random_base64(match: re.Match[str]) -> str:
    """An AWS secret access key, a line of a private key's body and the like: 40 or more
    base64 characters mixing upper case, lower case and digits. A git hash (lower-case hex) and a path (starting with ``/``, or with a
    lower-case word between slashes, like ``src/``) stay."""
    word = match.group(0)
    if word.startswith("/") or ("/" in word and any(_WORD.fullmatch(part) for part in word.split("/"))):
        return word
    if any(c.isupper() for c in word) and any(c.islower() for c in word) and any(c.isdigit() for c in word):
        return MASK
    return word


def scrub(text: str) -> str:
    """``text`` with every secret it recognizably holds replaced by ``***``."""
    text = _PEM.sub(f"-----PRIVATE KEY {MASK}-----", text)
    text = _PEM_END.sub(f"-----PRIVATE KEY {MASK}-----", text)  # the end of a key whose start was cut off
    text = mask_url(text)
    for pattern in _TOKENS:
        text = pattern.sub(MASK, text)
    text = _BASE64_WORD.sub(_random_base64, text)
    for pattern, replacement in _LABELLED:
        text = pattern.sub(replacement, text)
    return text
