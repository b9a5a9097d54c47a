"""What a secret looks like by its place: the value of a key, header, flag or URL
parameter that names a secret, whatever its shape (``password: hunter2``,
``数据库密码：…``, ``curl -u user:pass``, ``?token=…``).

A place says "a secret goes here", not that one is there: the value is kept when it is a
placeholder (``${DB_PASSWORD}``, ``<token>``), a bare boolean or null, a path
(``pwd: /home/me/project`` — the working directory, not a password), code that reads it
from elsewhere (``os.environ["…"]``) or, for a key that is not a password's, a small
number (``token: 1234`` counts tokens). The same bounds as ``secret_shapes.py``: no
nested repetition, every repeat bounded.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .secret_shapes import PLACEHOLDER_WORDS, Rule, lazy, not_placeholder, random_looking

_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.@+-]{1,200}(?:/[\w.@+-]{0,200}){1,50}|[A-Za-z]:\\\S*")
# ``SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]``, ``token = getenv("TOKEN")``: code that
# reads a secret from elsewhere (a name called or indexed, or an environment object). A
# name without a dot has no digit: ``Summer2024(!)`` is a password, not a call.
_CODE = re.compile(r"(?:[A-Za-z_]{1,40}|[A-Za-z_]\w{0,40}(?:\.[A-Za-z_]\w{0,40}){1,5})"
                   r"[\[(](?:[A-Za-z_)\]]|\Z)"
                   r"|(?:process\.env|import\.meta\.env|Deno\.env|ENV)\b")
# A path of names called or indexed (``secrets.token_hex(32)``, ``env::var("TOKEN")``,
# ``credentials.dig(:db, :password)``) whatever its argument; a slice (``token[7:]``);
# a word of code before an expression (``token = await getToken()``).
# A call whose argument is a name (``b64encode(userpass)``, ``cls(**kw)``) or an index
# (``auth[1]``, ``tokens[0]``): ``Summer2024(!)`` is neither (review-3: real code).
_CALL = re.compile(r"[A-Za-z_]\w{0,40}(?:(?:\.|::)[A-Za-z_]\w{0,40}){1,5}[\[(]"
                   r"|[A-Za-z_]\w{0,40}\[-?[0-9]{0,6}:"
                   r"|[A-Za-z_]\w{0,40}\((?:[A-Za-z_]|\*)|[A-Za-z_]\w{0,40}\[[0-9]{1,4}\]"
                   r"|(?:await|new|yield|lambda|not|typeof|function|async)\Z")
_COUNT = re.compile(r"[0-9][0-9,._]{0,7}[kKmM]?")
# "the password is 12+ characters", ``密码是 8-16 位``, ``密码：8~16 位``: a length
_LENGTH = re.compile(r"(?:[<>≥≤~]=?)?[0-9]{1,3}(?:\+|[-~–][0-9]{1,3})?")
# ``pw: 150W``, ``timeout_secret: 30s``: a measure, a number and its unit
_MEASURE = re.compile(r"[0-9]{1,6}(?:[.,][0-9]{1,3})?(?:[kMGT]?(?:V|W|Hz|B|bps)|m?s|min|h"
                      r"|%|px|dB|mA|mAh)")
# ``密钥：AES-256``, ``signing_key: RS256``: an algorithm, not a key
_ALGORITHM = re.compile(r"(?i:(?:aes|rsa|sha)-?[0-9]{3,4}(?:-[a-z]{2,4})?|(?:hs|rs|es|ps)"
                        r"(?:256|384|512)|ed(?:25519|448)|x(?:25519|448)|p-?(?:256|384|521)"
                        r"|secp[0-9]{3}[rk]1)")  # named exactly: ``x12345`` is a password
# where a secret is kept, not the secret: an AWS ARN (``…:secretsmanager:…:secret:prod/db``),
# a 1Password ``op://`` reference, a GCP ``projects/…/secrets/…`` name
_REFERENCE = re.compile(r"arn:aws[\w-]{0,20}:|op://|projects/[^/\s]{1,100}/secrets/")
# ``Token: "#ddd0c0"`` (a theme's colour for a token of code)
_COLOUR = re.compile(r"#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")
# ``git config user.signingkey 3AA5C34371567BD2``: a GPG key's id or fingerprint, public
_KEY_ID = re.compile(r"(?:0x)?(?:[0-9A-F]{16}|[0-9A-F]{40})")
# a kebab-case word (``credentials: include``, ``token: per-user``, ``?key=publishable``,
# ``--secret=db-password``): a mode or a name; a token or an API key is drawn at random
_WORD = re.compile(r"[A-Za-z][a-z]{0,23}(?:-[a-z]{1,24}){0,4}")  # and ``token = Name``
_NAME_PART = re.compile(r"[A-Z]{2,}(?![a-z])|[A-Z]?[a-z]+")
_SECRET_WORDS = frozenset({"password", "passwd", "pwd", "pw", "pass", "secret", "secrets",
                           "token", "key", "apikey", "credential", "credentials", "creds",
                           "passphrase", "auth"})
# an attribute's path (``request.url.password``, ``rust_openssl.hpke.X25519PrivateKey``)
_ATTRIBUTE = re.compile(r"[A-Za-z_]{1,40}(?:\.[A-Za-z_]{1,40}){1,6}"
                        r"|[A-Za-z_]\w{0,40}(?:\.[A-Za-z_]\w{0,40}){2,6}")
# a type's name (``private_key: ed25519.Ed25519PrivateKey``, ``PKCS7PrivateKeyTypes``)
_TYPE = re.compile(r"(?:[A-Za-z_]\w{0,40}\.){0,3}[A-Z]\w{0,60}"
                   r"(?:Key|Token|Secret|Password|Credentials?)(?:Types?|s)?")
# a quoted value that says where the secret is or what it must be (``password: "see
# 1Password"``, ``"required, min 12 chars"``, Laravel's ``'required|min:12'``, a header's
# ``"Bearer " + t``): prose or a rule, not a passphrase
_POINTER = re.compile(r"(?i)(?:see|ask|in|from|stored|set|same|use|get|check|via|per"
                      r"|required|optional|nullable|sometimes|min|max|at least|bearer|basic"
                      r"|token)[ ,:|]")
_PASSWORD_KEY = re.compile(r"(?i)pass|pwd|pw\b|密码|密碼|口令|パスワード|비밀번호")


def assigned(secret: str, password: bool = True) -> bool:
    """A value given to a key that names a secret: anything but a placeholder, a bare
    boolean or null, a value that is only a few repeated characters, a file path, code
    that reads the secret from elsewhere or names the variable holding it, where it is
    kept, a length or an algorithm, or — for a key that is not a password's — a small
    number or a word."""
    core = secret.rstrip(")]},:")  # ``OpenAI(api_key=api_key)``: the call's closing
    return (not_placeholder(secret) and len(set(secret)) >= 3 and
            core.lower() not in {"true", "false", "null", "none", "nil", "yes", "no"}
            and core.casefold() not in PLACEHOLDER_WORDS
            and not _PATH.fullmatch(secret) and not _CODE.match(secret)
            and not _CALL.match(secret) and not _variable(core)
            and not _REFERENCE.match(secret) and not _LENGTH.fullmatch(secret)
            and not _ALGORITHM.fullmatch(secret)
            and not _MEASURE.fullmatch(secret.rstrip(".!?"))  # "…, pw: 150W."
            and not _POINTER.match(secret) and not _COLOUR.fullmatch(secret)
            and (password or not (_COUNT.fullmatch(secret) or _WORD.fullmatch(secret)
                                   or _KEY_ID.fullmatch(secret))))


def _variable(value: str) -> bool:
    """A name of code that holds the secret or a value's type (``token_value``,
    ``self._password``, ``config.apiKey``, ``CLIENT_SECRET``, ``Ed25519PrivateKey``): an
    attribute's path (names without digits joined by ``.``, or three names with them),
    a type named for a secret, or words without digits joined by ``_``, ``::`` or a
    change of case, one of them a secret's — a literal secret is drawn at random or
    chosen by a person, not named for what it is."""
    if _ATTRIBUTE.fullmatch(value) or _TYPE.fullmatch(value):
        return True
    if not re.fullmatch(r"[A-Za-z_](?:[A-Za-z_]|\.|::){0,120}", value):
        return False
    parts = [p.lower() for p in _NAME_PART.findall(value)]
    return len(parts) >= 2 and any(part in _SECRET_WORDS for part in parts)


def password_key(key: str) -> bool:
    """A key that names a password (its value is a ``password``, else a ``secret``)."""
    return bool(_PASSWORD_KEY.search(key))


# Where a value ends: whitespace, a quote, ``,`` or ``;``, and the punctuation and script
# of CJK text (``密码：hunter2，下周换`` — the comma and what follows are prose).
_VALUE = (r"[^\s\"'`,;\u2018-\u201f\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
          r"\uff01-\uff0f\uff1a-\uff20\uff5b-\uff65]")
# a URL parameter's value ends at the next parameter, a fragment, a quote, the end of a
# Markdown link or CJK text
_URL_VALUE = r"[^&#?\s\"'<>()\[\]`\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]"
_LAST = _VALUE[:-1] + r".!?:)\]]"  # a value's last character in a sentence: not its full stop

KEY_WORDS = (r"(?<!ask)pass(?:word|wd|phrase)?|pwd|pw|secret|token|api[_-]?key|apikey"
             r"|(?:access|private|session|secret|signing|encryption|master|app|license"
             r"|account|shared|consumer)[_-]?key(?:[_-]?base)?"
             r"|client[_-]?secret|auth[_-]?token|credentials?")
# The key ends with a secret word (``DB_PASSWORD``, ``api-key``, ``SECRET_KEY``; not
# ``max_tokens``, ``token_url``, ``secretName`` or ``primary_key``); the value is quoted,
# or given with ``=``, or holds a digit or a sign, or ends the line — "the secret: keep it
# simple" is prose, not a value. A quoted value is whole up to its closing quote: a
# passphrase has spaces ("correct horse battery staple"), and a JSON string an escaped
# quote (``"hun\"ter2"``) — stopping at the first space or quote left the rest of the
# secret on disk. A value is up to 8,000 characters (an AWS session token, a private key
# pasted on one line into ``.env``: a cap of 200 left the rest of it on disk); a longer
# match costs no more than the text it consumes, and a quote never closed is scanned at
# most twice in any 8,000 characters (a second opening quote closes the first).
# ``：`` and ``＝`` are what a Chinese input method types for ``:`` and ``=``. A key right
# after ``?`` or ``&`` is a URL parameter (``url_secret``).
ASSIGNMENT = lazy(
    r"(?i)(?<![A-Za-z0-9_.?&-])[A-Za-z0-9_.-]{0,40}(?:" + KEY_WORDS + r")(?![A-Za-z0-9_])"
    r"[\"']?[ \t]*(?:"
    # a quoted value also after PHP's and Ruby's ``=>`` and Go's ``:=`` (review-3)
    r"(?:=>|:=|[=:：＝])[ \t]*\"(?P<b>(?:[^\"\\\r\n]|\\[^\r\n]){4,8000})\""
    r"|(?:=>|:=|[=:：＝])[ \t]*'(?P<e>(?:[^'\\\r\n]|\\[^\r\n]){4,8000})'"
    r"|[=＝][ \t]*[\"']?(?P<a>" + _VALUE + r"{4,8000})"
    # after a colon, a value holding a digit or a sign, or one that ends the line: the
    # caller tells which (``colon_value``), as a lookahead here cost 3 s on 1 MB of
    # ``password:`` repeated
    r"|[:：][ \t]*(?P<c>" + _VALUE + r"{4,8000}))")

_SIGN = re.compile(r"[0-9!#%&*+/?@^~]")
_LINE_END = re.compile(r"[ \t]*(?:\r?\n|$)")


def colon_value(text: str, match: re.Match[str]) -> bool:
    """A value after a colon (``ASSIGNMENT``'s group ``c``) is one when it holds a digit
    or a sign, or ends its line: ``password: hunter2``, not "the secret: keep it"."""
    value, start = match.group("c"), match.start()
    if start and text[start - 1] == ":" and text[match.start("c") - 1] == ":":
        return False  # ``…:secretsmanager:…:secret:prod/db``: a segment of an ARN's name
    if _YAML_TAG.fullmatch(value) and _TAGGED.match(text, match.end("c")):
        return False  # ``password: !vault |``, ``!secret wifi_password``: a YAML tag
    return bool(_SIGN.search(value) or _LINE_END.match(text, match.end("c")))


_YAML_TAG = re.compile(r"![A-Za-z][\w.:/-]{0,40}")
_TAGGED = re.compile(r"[ \t]+\S")


SECRET_KEY = lazy(r"(?i)[A-Za-z0-9_.-]{0,40}(?:" + KEY_WORDS + r")")
"""A frontmatter key that names a secret (``set password=…``)."""

_CJK_WORDS = (r"密码|密碼|口令|密钥|密鑰|秘钥|秘鑰|金鑰|私钥|私鑰|令牌|凭证|凭据|憑證|憑據"
              r"|パスワード|비밀번호")
# ``数据库密码：…``, ``密码: …``, ``口令是 …``, ``wifi 密码 8h3k!x2q``: a CJK key needs no
# boundary before it (CJK has no spaces between words) and is followed by a colon, an
# equals sign, 是/为 ("is") or only a space. What counts as a value is the English
# rule's (``cjk_value``): ``密码学`` (cryptography), ``密码：至少 12 位`` and
# ``用户名密码是 LDAP 账号`` ("the password is the LDAP account") are prose.
CJK_ASSIGNMENT = lazy(
    # ``密码改成了 …``, ``口令设为 …`` ("changed to", "set to"): what it is now (review-3)
    r"(?P<key>" + _CJK_WORDS + r")[ \t]*(?P<sep>[:：=＝]|是|为|為|は|는"
    r"|改成了?|改为|换成了?|设为|设成|设置为|)[ \t]*[:：]?[ \t]*"
    r"(?P<quote>[\"'“「『]?)(?P<secret>" + _VALUE + r"{4,8000})")

_PROSE_GOES_ON = re.compile(r"[ \t]*[^\s，。；、）)」』”！？!?]")


def cjk_value(text: str, match: re.Match[str]) -> bool:
    """A CJK key's value is one when given with ``=`` or quoted, or when it holds a digit
    or a sign, or — after a colon or 是 — when it ends its clause; with only a space
    between, it needs the digit or sign (``令牌 2 个`` is a count)."""
    secret, sep = match.group("secret"), match.group("sep")
    if sep in ("=", "＝") or match.group("quote") or _SIGN.search(secret):
        return True
    return bool(sep) and not _PROSE_GOES_ON.match(text, match.end("secret"))


def _password(secret: str) -> bool:
    return assigned(secret, password=True)


def _secret(secret: str) -> bool:
    return assigned(secret, password=False)


def _signed_password(secret: str) -> bool:
    return (assigned(secret, password=True) and bool(_SIGN.search(secret))
            and not _COMPOUND.search(secret))


# "the secret is base64-encoded", "the token is HS256-signed", "the password is
# 2FA-protected": a compound ending in a word describes it (review-3)
_COMPOUND = re.compile(r"-[a-z]{4,}\Z")


def _sentence_token(secret: str) -> bool:
    return random_looking(secret) and not _COMPOUND.search(secret)


def _flag(secret: str) -> bool:
    """A flag's argument given after a space: a secret only when it does not read as a
    word (``--token and it works``): a digit, a sign, or 12+ characters."""
    return assigned(secret, password=False) and (
        len(secret) >= 12 or any(not c.isalpha() for c in secret))


_CLI_LINE = r"[^\n]{0,300}?[ \t]"  # the rest of the command line, up to the flag
# "the password for the staging db is": what a password is for, a few words
_FOR_WHAT = r"(?:[ \t]+(?:for|of|to|on)[ \t][^\n.;:!?\"]{1,60}?)?"

def _named_values(kind: str, words: str, check: Callable[[str], bool]) -> tuple[Rule, ...]:
    """A secret's value given beside its name rather than after it (review-3): a
    Kubernetes or ECS env entry (``- name: DB_PASSWORD`` then ``value: …``, ``{"name":
    "API_TOKEN", "value": "…"}``), an XML element (Maven's ``<password>…</password>``)
    and .NET's ``<add key="ApiKey" value="…" />``."""
    name = r"[A-Za-z0-9_.-]{0,40}(?:" + words + r")"
    return (
        Rule(kind, lazy(
            r"(?i)\bname[\"']?[ \t]*:[ \t]*[\"']?" + name + r"[\"']?[ \t]*"
            r"(?:,[ \t]*|\r?\n[ \t]{0,20}(?:-[ \t]{1,4})?)[\"']?value[\"']?[ \t]*:[ \t]*[\"']?"
            r"(?P<secret>" + _VALUE + r"{4,8000})"), check, by_place=True,
            needs=("value",)),
        Rule(kind, lazy(
            r"(?i)<(?P<tag>" + name + r")>(?P<secret>[^<>\s]{4,8000})</(?P=tag)>"),
            check, by_place=True, needs=("</",)),
        Rule(kind, lazy(
            r"(?i)\bkey=[\"']" + name + r"[\"'][ \t]+value=[\"'](?P<secret>[^\"'\r\n]{4,8000})"
            r"[\"']"), check, by_place=True, needs=("value=",)),
    )


_NAMED_VALUES = (
    *_named_values("password", r"pass(?:word|wd|phrase)?|pwd", _password),
    *_named_values("secret", r"secret|token|api[_-]?key|apikey|(?:access|private|secret"
                             r"|signing|encryption|master|account)[_-]?key|credentials?",
                   _secret),
)

PLACES: tuple[Rule, ...] = (
    # ``Authorization: Token …``, ``: ApiKey …``, ``: sk_…``: any scheme but Bearer and
    # Basic, which have their own kinds
    Rule("authorization", lazy(
        r"(?i)\bauthorization[\"']?[ \t]*[:=][ \t]*[\"']?(?!(?:bearer|basic)\b)"
        r"(?:[A-Za-z][A-Za-z-]{1,20}[ \t]+)?(?P<secret>[^\s\"',;]{8,2000})"),
        _flag, by_place=True, needs=("authorization",)),
    # ``?key=…``, ``&access_token=…``, ``&sig=…`` (an Azure SAS), ``X-Amz-Signature=…``:
    # the value ends at the next parameter
    Rule("url_secret", lazy(
        r"(?i)[?&](?:x-amz-|api[_-]?|access[_-]?|auth[_-]?|private[_-]?|client[_-]?"
        r"|secret[_-]?|security[_-]?|refresh[_-]?|id[_-]?)?"
        r"(?:key|token|secret|password|passwd|pwd|sig|signature|auth|apikey|credential)"
        r"=(?P<secret>" + _URL_VALUE + r"{6,2000})"), _secret, by_place=True,
        needs=("key=", "token=", "secret=", "password=", "passwd=", "pwd=", "sig=",
               "signature=", "auth=", "credential=")),
    Rule("password", lazy(
        r"\bcurl\b" + _CLI_LINE + r"(?:-u|--user)[ \t=]{0,3}[\"']?[^\s:\"']{1,100}:"
        r"(?P<secret>" + _VALUE + r"{1,200})"), _password, by_place=True, needs=("curl",)),
    Rule("password", lazy(
        # ``-pPASS`` (no space: with a space, mysql asks for it)
        r"\bmysql(?:dump|admin|sh|import|check)?\b" + _CLI_LINE +
        r"-p(?P<secret>(?!-)" + _VALUE + r"{1,200})"), _password, by_place=True,
        needs=("mysql",)),
    Rule("password", lazy(
        r"\b(?:sshpass[ \t]{1,10}-p|redis-cli\b" + _CLI_LINE + r"-a)[ \t]*[\"']?"
        r"(?P<secret>(?!-)" + _VALUE + r"{1,200})"), _password, by_place=True,
        needs=("sshpass", "redis-cli")),
    Rule("password", lazy(
        # ``--password PASS`` (``--password=PASS`` is a key's value), ``docker login -p``
        r"(?i)(?:(?<!\S)--passw(?:or)?d|\blogin\b" + _CLI_LINE + r"-p)[ \t]{1,10}[\"']?"
        r"(?P<secret>(?!-)" + _VALUE + r"{4,200})"), _flag, by_place=True,
        needs=("--passw", "login")),
    Rule("secret", lazy(
        r"(?i)(?<!\S)--(?:[a-z0-9]{1,20}-)?(?:token|secret|api-key|apikey|access-key"
        r"|auth-token|secret-key)[ \t]{1,10}[\"']?(?P<secret>(?!-)" + _VALUE + r"{4,200})"),
        _flag, by_place=True, needs=("--",)),
    # "the wifi password is 8h3k!x2q.": a sentence, as ``口令是 …`` is; the value needs a
    # digit or a sign ("the password is stored in the vault" is prose)
    # "the password for the staging db is …" names what it is for first (review-3)
    Rule("password", lazy(
        r"(?i)\b(?:password|passphrase|passcode|passwd)" + _FOR_WHAT + r"[ \t]+(?:is|was)"
        r"[ \t]*:?[ \t]+[\"'“]?(?P<secret>" + _VALUE + r"{2,199}" + _LAST + r")"),
        _signed_password, by_place=True, needs=("pass",)),
    # 'my password is "swordfish"': quoted, a word is the password; words in quotes are
    # prose as often as a passphrase ('the password is "the usual one"'), so they stay
    Rule("password", lazy(
        r"(?i)\b(?:password|passphrase|passcode|passwd)" + _FOR_WHAT + r"[ \t]+(?:is|was)"
        r"[ \t]*:?[ \t]+[\"“](?P<secret>[^\s\"“”]{4,200})[\"”]"), _password,
        by_place=True, needs=("pass",)),
    # ``Cookie: sessionid=…``, ``Set-Cookie: connect.sid=…; HttpOnly``: a session's cookie
    # is its login (a ``…token=`` cookie is a key's value already)
    Rule("session_cookie", lazy(
        r"(?i)(?:\bcookie:[ \t]*|;[ \t]?)[\w.-]{0,30}?(?:sess|sid|jwt)[\w.-]{0,20}="
        r"(?P<secret>[^\s;,\"']{16,4000})"), random_looking, by_place=True,
        needs=("cookie",)),
    # "the API key is …", "the token for CI is …", ``token 是 …``: random-looking, as a
    # token is ("the token is short-lived" is prose)
    Rule("secret", lazy(
        r"(?i)\b(?:api[ _-]?key|token|secret|access[ _-]key|client[ _-]secret)" + _FOR_WHAT
        + r"[ \t]*(?:(?:is|was)[ \t]|是|为)[ \t]*:?[ \t]*[\"'“]?"
        r"(?P<secret>[A-Za-z0-9_+/=.-]{9,400}[A-Za-z0-9=])"), _sentence_token, by_place=True,
        needs=("token", "secret", "key")),
    *_NAMED_VALUES,
    # SQL: ``ALTER USER app WITH PASSWORD '…'``, MySQL's and Oracle's ``IDENTIFIED BY '…'``
    Rule("password", lazy(
        r"(?i)\b(?:with[ \t]+(?:encrypted[ \t]+)?password|identified[ \t]+by)[ \t]+"
        r"'(?P<secret>[^'\r\n]{1,200})'"), _password, by_place=True,
        needs=("password", "identified")),
    # a Dockerfile's ``ENV DB_PASSWORD value`` (the form without ``=``)
    Rule("password", lazy(
        r"(?m)^[ \t]*ENV[ \t]+[A-Za-z0-9_]{0,40}(?i:pass(?:word|wd)?|pwd)[ \t]+"
        r"(?P<secret>" + _VALUE + r"{4,8000})"), _password, by_place=True, needs=("env",)),
    Rule("secret", lazy(
        r"(?m)^[ \t]*ENV[ \t]+[A-Za-z0-9_]{0,40}(?i:secret|token|api_?key|secret_?key)[ \t]+"
        r"(?P<secret>" + _VALUE + r"{4,8000})"), _secret, by_place=True, needs=("env",)),
    # ``~/.netrc``: ``machine host login user password pw``, on one line or several
    Rule("password", lazy(
        r"\bmachine\s{1,20}\S{1,200}\s{1,20}login\s{1,20}\S{1,200}\s{1,20}password"
        r"\s{1,20}(?P<secret>\S{1,200})"), _password, by_place=True, needs=("machine",)),
    # ``~/.pgpass``: ``host:port:database:user:password``, a line of its own (a host with
    # a letter or a dot, or ``*``: ``10:30:standup:daily:notes`` is a time, not a host)
    Rule("password", lazy(
        r"(?m)^(?=[\w.*-]{0,200}[A-Za-z.*])[\w.*-]{1,200}:(?:[0-9]{1,5}|\*):[\w.*-]{1,200}"
        r":[\w.*-]{1,200}:(?P<secret>\S{1,200})$"), _password, by_place=True),
    # Heroku's API key is a UUID, told from a request id only by the word before it
    Rule("heroku_key", lazy(
        r"(?i)heroku[\w .-]{0,30}[:=][ \t]*[\"']?(?P<secret>[0-9a-f]{8}-[0-9a-f]{4}"
        r"-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(?![A-Za-z0-9_-])"), not_placeholder, by_place=True,
        needs=("heroku",)),
    # ``~/.docker/config.json``: ``"auths": {"ghcr.io": {"auth": "base64(user:token)"}}``
    Rule("docker_auth", lazy(
        r"\"auth\"[ \t]*:[ \t]*\"(?P<secret>[A-Za-z0-9+/]{8,2000}={0,2})\""),
        not_placeholder, needs=('"auth"',)),
)
"""Values by their place (besides the key assignments, which ``redact.py`` runs)."""

KEY_NEEDS = ("pass", "pw", "secret", "token", "key", "credential")
"""A fragment every key assignment needs (``ASSIGNMENT``), as ``Rule.needs``."""

CJK_NEEDS = tuple(_CJK_WORDS.split("|"))
"""A fragment every CJK key's value needs (``CJK_ASSIGNMENT``)."""
