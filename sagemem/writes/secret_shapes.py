"""What a secret looks like by its shape: a provider's documented prefix and length.

Each rule names one kind of token (``ghp_…``, ``hf_…``, ``SG.….…``); its group
``secret`` is what ``redact.py`` replaces. The formats are those of gitleaks' and
detect-secrets' default rule sets that a memory folder plausibly holds (the corpus
``tests/redaction/secret_formats.md`` has one example of each, and docs/redaction.md's table is
generated from it by ``tools/redaction_table.py``).

Two rules keep this fast and bounded on hostile input: no nested repetition (a hostile
text costs time linear in its length), and every repeat has an upper bound.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass


class LazyPattern:
    """A regular expression compiled on its first use. The rules' patterns take ~45 ms
    to compile — more than Python takes to start — and the prompt hook redacts every
    question it records, while a question holds a fragment of few rules (``Rule.needs``):
    compiled on import, every hook paid for all of them."""

    __slots__ = ("_compiled", "flags", "source")

    def __init__(self, source: str, flags: int = 0) -> None:
        self.source, self.flags = source, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def search(self, text: str, pos: int = 0, endpos: int = sys.maxsize
               ) -> re.Match[str] | None:
        return self.compiled.search(text, pos, endpos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.compiled.fullmatch(text)


lazy = LazyPattern

MARKED = re.compile(r"<REDACTED:[a-z_]+>")
_MARK_BEFORE = re.compile(r"<REDACTED:[a-z_]+>\Z")

PLACEHOLDER = lazy(
    # ``<token>``, ``<set in vault>``, ERB's ``<%= ENV["KEY"] %>``
    r"\.\.\.|…|x{4,}|X{4,}|\*{3,}|<[^<>\r\n]{0,80}>|\$\{[^}]*\}|\{\{[^}]*\}\}"
    # ``$DB_PASSWORD`` names a variable; ``p4$Word`` or a Django key's ``k#8$v`` is a
    # secret that happens to hold a ``$``: a reference stands alone and is upper case
    r"|(?<![A-Za-z0-9])(?-i:\$[A-Z_][A-Z0-9_]{1,60})(?![a-z])"
    # what fills the value in later: a shell's ``$(op read …)``, Windows' ``%DB_PASS%``,
    # Ruby's ``#{…}``, a format's ``{password}``/``{record.token!r}``/``{}``/``%s``, a
    # template's ``@@TOKEN@@`` or ``[PASSWORD]`` — each a false alarm that cut a memory's
    # snippet (review-3)
    r"|\$\(|(?-i:%[A-Z_][A-Z0-9_]{2,40}%)|#\{[^}\r\n]{0,80}\}|\{(?:[A-Za-z_][^{}\s]{0,80})?\}"
    r"|\A%[sd]\Z|@@\w{1,40}@@|(?-i:\[[A-Z_]{3,40}\])"
    # ``password = <your PyPI token>``: unquoted, the value stops at the first space
    r"|\A<[A-Za-z]"
    r"|%\(\w+\)s|EXAMPLE|example|your[ _-]|changeme|placeholder|dummy|REDACTED"
    r"|replace[_-]?me|insert[_ -]|[_-]here\b|\btodo\b|\btbd\b|fixme",
    re.I)


@dataclass(frozen=True)
class Rule:
    """One kind of secret: ``pattern``'s group ``secret`` is what is replaced, when
    ``check`` accepts it. ``by_place`` rules (a header's value, a flag's argument) yield
    to a provider's shape found at the same place, so ``token ghp_…`` is a
    ``github_token``.

    ``needs``: fragments (lower case) of which a text must hold one for the rule to run
    at all — most texts hold none, and a pattern that begins with a literal is found by
    a fast scan; ``not_after``: characters the secret must not follow (a token stands
    alone). Both are kept out of the pattern because a lookbehind or ``(?i)`` at its
    start turns that scan off: 30 ms a rule over 1 MB instead of 0.5.
    """

    kind: str
    pattern: LazyPattern
    check: Callable[[str], bool] = lambda secret: True
    by_place: bool = False
    needs: tuple[str, ...] = ()
    not_after: str = ""

    def finds(self, text: str, folded: str) -> Iterator[re.Match[str]]:
        """Each match in ``text`` (``folded``: ``text.lower()``) this rule accepts."""
        if self.needs and not any(word in folded for word in self.needs):
            return
        at = 0
        while match := self.pattern.search(text, at):
            if self._accepts(text, match):
                yield match
                at = match.end()
            else:  # a command refused (``curl -u $U:$P``) must not hide the next one
                at = match.start("secret") if self.by_place else match.end()
                at = max(at, match.start() + 1)

    def _accepts(self, text: str, match: re.Match[str]) -> bool:
        start = match.start("secret")
        if start and (text[start - 1] in self.not_after
                      or (self.not_after and mark_before(text, start))):
            return False
        if text.startswith("<REDACTED:", match.end("secret")):
            return False  # a value cut short by a mark ran on into a secret: not this one
        return self.check(match.group("secret"))


def mark_before(text: str, at: int) -> bool:
    """Whether a ``<REDACTED:…>`` mark ends at ``at``: it stands where a secret's
    characters stood, so what is glued to it was glued to them (else a second redaction
    would find what the first kept)."""
    return bool(_MARK_BEFORE.search(text, max(0, at - 40), at))


def random_looking(secret: str) -> bool:
    """A token body drawn at random, not a word, a repeated filler or an example: a
    digit and a letter, at least 10 distinct characters, no placeholder in it."""
    return (any(c.isdigit() for c in secret) and any(c.isalpha() for c in secret)
            and len(set(secret)) >= 10 and not PLACEHOLDER.search(secret))


def mixed_letters(secret: str) -> bool:
    """A body of letters only (``hf_…``): both cases, 10+ distinct, no placeholder."""
    return (any(c.isupper() for c in secret) and any(c.islower() for c in secret)
            and len(set(secret)) >= 10 and not PLACEHOLDER.search(secret))


PLACEHOLDER_WORDS = frozenset({"password", "passwd", "pass", "pwd", "secret", "token",
                               "apikey", "api_key", "key", "test", "demo", "sample",
                               "密码", "口令", "密钥", "令牌",
                               # a schema's words: ``password: required``, ``token: string``
                               "required", "optional", "string", "str", "text", "int",
                               "integer", "bool", "boolean", "bytes", "secretstr", "none",
                               "empty", "unset", "hidden", "masked", "n/a"})
"""Values that name what goes there (``postgres://user:password@host`` in a doc, a
schema's ``password: required``)."""


def not_placeholder(secret: str) -> bool:
    """Whether a value is kept as a secret: not a ``${VAR}``/``<token>`` placeholder,
    not already redacted, not a word that names what goes there."""
    return (not PLACEHOLDER.search(secret) and not MARKED.search(secret)
            and secret.casefold().strip("_-") not in PLACEHOLDER_WORDS)


_WORD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"


def _token(kind: str, body: str, needs: tuple[str, ...],
           check: Callable[[str], bool] = random_looking) -> Rule:
    """A token that stands alone: no word character or ``-`` touches either end."""
    return Rule(kind, lazy(r"(?P<secret>" + body + r")(?![A-Za-z0-9_-])"), check,
                needs=needs, not_after=_WORD + "-")


SHAPES: tuple[Rule, ...] = (
    Rule("private_key", lazy(
        r"(?P<secret>-----BEGIN (?P<label>(?:[A-Z]+ ){0,2}PRIVATE KEY(?: BLOCK)?)-----"
        r"(?:(?!-----)[\s\S]){1,20000}-----END (?P=label)-----"
        # a key cut off before its END line (``head -5 id_ed25519``): its base64 lines
        r"|-----BEGIN (?:[A-Z]+ ){0,2}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:\r?\n[A-Za-z0-9+/=]{1,200}(?![^\r\n])){1,1000})"), needs=("-----begin",)),
    Rule("anthropic_key", lazy(
        r"(?P<secret>sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{20,200})"), random_looking,
        needs=("sk-ant-",), not_after=_WORD + "-"),
    Rule("openai_key", lazy(
        r"(?P<secret>sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200})"), random_looking,
        needs=("sk-",), not_after=_WORD + "-"),
    Rule("aws_access_key_id", lazy(
        r"(?P<secret>(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16})(?![A-Z0-9])"), not_placeholder,
        needs=("akia", "asia", "abia", "acca"), not_after="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
    Rule("aws_secret_access_key", lazy(
        r"(?i)aws_?secret(?:_?access)?_?key[\"']?[ \t]*[:=][ \t]*[\"']?"
        r"(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])"), random_looking,
        needs=("aws",)),
    Rule("github_token", lazy(
        r"(?P<secret>(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255}))"),
        random_looking, needs=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        not_after=_WORD),
    Rule("gitlab_token", lazy(
        r"(?P<secret>gl(?:pat|dt|ptt|rt|cbt|soat|ft|imt|oas|agent)-[A-Za-z0-9_-]{20,255})"),
        random_looking, needs=("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "glsoat-",
                               "glft-", "glimt-", "gloas-", "glagent-"),
        not_after=_WORD + "-"),
    Rule("slack_token", lazy(
        r"(?P<secret>(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,255})"), random_looking,
        needs=("xox", "xapp-"), not_after=_WORD.replace("_", "") + "-"),
    Rule("slack_webhook", lazy(
        r"(?P<secret>https://hooks\.slack\.com/(?:services|workflows|triggers)/"
        r"[A-Za-z0-9/]{20,200})"), random_looking, needs=("hooks.slack.com",)),
    Rule("stripe_key", lazy(
        r"(?P<secret>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,200}|whsec_[A-Za-z0-9]{24,200})"),
        random_looking, needs=("sk_", "rk_", "whsec_"), not_after=_WORD),
    Rule("google_api_key", lazy(
        r"(?P<secret>AIza[0-9A-Za-z_-]{35})(?![A-Za-z0-9_-])"), not_placeholder,
        needs=("aiza",), not_after=_WORD + "-"),
    _token("google_client_secret", r"GOCSPX-[A-Za-z0-9_-]{28}", ("gocspx-",)),
    Rule("google_oauth_token", lazy(
        r"(?P<secret>ya29\.[0-9A-Za-z_-]{20,2048})"), random_looking, needs=("ya29.",),
        not_after=_WORD + "-"),
    Rule("jwt", lazy(
        r"(?P<secret>eyJ[A-Za-z0-9_-]{8,2000}\.eyJ[A-Za-z0-9_-]{8,4000}"
        r"\.[A-Za-z0-9_-]{8,2000})"), needs=("eyj",), not_after=_WORD + "-"),
    Rule("bearer_token", lazy(
        r"(?i)\bbearer[ \t]+(?P<secret>[A-Za-z0-9._~+/-]{16,2000}=*)"), random_looking,
        needs=("bearer",)),
    Rule("basic_auth", lazy(
        r"(?i)\bauthorization:[ \t]*basic[ \t]+(?P<secret>[A-Za-z0-9+/]{8,2000}=*)"),
        not_placeholder, needs=("basic",)),
    Rule("url_password", lazy(
        # no user (``redis://:pw@host``) and an unencoded ``@`` in the password: up to
        # the last ``@`` before the path
        r"(?i)\b[a-z][a-z0-9+.-]{1,20}://[^\s/:@]{0,200}:(?P<secret>[^\s/]{1,200})@"),
        not_placeholder, needs=("://",)),
    # -- AI providers
    _token("huggingface_token", r"(?:hf_|api_org_)[A-Za-z0-9]{34,40}", ("hf_", "api_org_"),
           mixed_letters),
    _token("groq_key", r"gsk_[A-Za-z0-9]{48,56}", ("gsk_",)),
    _token("replicate_token", r"r8_[A-Za-z0-9]{37}", ("r8_",)),
    _token("xai_key", r"xai-[A-Za-z0-9]{70,90}", ("xai-",)),
    _token("perplexity_key", r"pplx-[A-Za-z0-9]{40,56}", ("pplx-",)),
    # -- package registries and code hosts
    _token("pypi_token", r"pypi-AgE[A-Za-z0-9_-]{50,1000}", ("pypi-",), not_placeholder),
    _token("npm_token", r"npm_[A-Za-z0-9]{36}", ("npm_",)),
    _token("docker_hub_token", r"dckr_pat_[A-Za-z0-9_-]{27,40}", ("dckr_pat_",)),
    _token("atlassian_token", r"AT[AC]TT3[A-Za-z0-9_=-]{150,300}|ATBB[A-Za-z0-9_=.-]{28,40}",
           ("atatt3", "atctt3", "atbb")),
    _token("artifactory_key", r"AKCp[A-Za-z0-9]{69}", ("akcp",)),
    # -- mail, messaging, payments
    _token("sendgrid_key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}", ("sg.",)),
    _token("twilio_key", r"(?:SK|AC)[0-9a-fA-F]{32}", ()),
    _token("mailgun_key", r"key-[0-9a-f]{32}", ("key-",)),
    _token("mailchimp_key", r"[0-9a-f]{32}-us[0-9]{1,2}", ("-us",)),
    _token("telegram_bot_token", r"[0-9]{8,10}:AA[0-9A-Za-z_-]{33}", (":aa",)),
    _token("discord_bot_token", r"[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}"
                                r"\.[A-Za-z0-9_-]{27,38}", ()),
    Rule("discord_webhook", lazy(
        r"(?P<secret>https://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/webhooks/"
        r"[0-9]{5,30}/[A-Za-z0-9_-]{30,100})"), not_placeholder, needs=("discord",)),
    _token("shopify_token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", ("shp",)),
    _token("square_token", r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|EAAA[0-9A-Za-z_-]{60}",
           ("sq0", "eaaa")),
    # -- clouds and infrastructure
    Rule("azure_storage_key", lazy(
        r"(?i:AccountKey|SharedAccessKey)=(?P<secret>[A-Za-z0-9+/]{20,200}={0,2})"),
        not_placeholder, needs=("accountkey=", "sharedaccesskey=")),
    _token("azure_client_secret", r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}", ("q~",)),
    _token("heroku_key", r"HRKU-[0-9A-Za-z_-]{60}", ("hrku-",)),
    _token("digitalocean_token", r"do[opr]_v1_[a-f0-9]{64}", ("_v1_",)),
    _token("databricks_token", r"dapi[a-f0-9]{32}(?:-[0-9])?", ("dapi",)),
    _token("vault_token", r"hv[sb]\.[A-Za-z0-9_-]{24,200}", ("hvs.", "hvb.")),
    _token("terraform_token", r"[a-zA-Z0-9]{14}\.atlasv1\.[a-zA-Z0-9_=-]{60,70}",
           (".atlasv1.",)),
    _token("doppler_token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", ("dp.",)),
    _token("flyio_token", r"fo1_[A-Za-z0-9_-]{43}", ("fo1_",)),
    _token("supabase_token", r"sbp_[a-f0-9]{40}", ("sbp_",)),
    _token("tailscale_key", r"tskey-(?:auth|api|client|scim|webhook)-[A-Za-z0-9]{6,20}"
                            r"-[A-Za-z0-9]{20,40}", ("tskey-",)),
    _token("onepassword_token", r"ops_eyJ[A-Za-z0-9+/_-]{100,2000}={0,2}", ("ops_eyj",),
           not_placeholder),
    _token("age_secret_key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
           ("age-secret-key-",), not_placeholder),
    # -- observability and work tools
    _token("sentry_token", r"sntry[su]_[A-Za-z0-9+/=_-]{40,400}", ("sntry",)),
    _token("grafana_token", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}"
                            r"={0,2}", ("glsa_", "glc_")),
    _token("newrelic_key", r"NRAK-[A-Z0-9]{27}", ("nrak-",)),
    _token("postman_key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}", ("pmak-",)),
    _token("linear_key", r"lin_api_[A-Za-z0-9]{40}", ("lin_api_",)),
    _token("notion_token", r"ntn_[A-Za-z0-9]{40,50}|secret_[A-Za-z0-9]{43}",
           ("ntn_", "secret_")),
    _token("figma_token", r"figd_[A-Za-z0-9_-]{40,60}", ("figd_",)),
    _token("mapbox_token", r"sk\.eyJ[A-Za-z0-9_-]{20,400}\.[A-Za-z0-9_-]{20,100}",
           ("sk.eyj",)),
)
"""Every provider shape, each a kind of its own."""
