#!/usr/bin/python
# -*- coding: utf-8 -*-
# Part of cipherbench (MIT OR Apache-2.0).
"""Ansible module: put the lines `cipherbench fleet` chose into sshd's or nginx's
configuration, the way the distribution expects, checked before and after."""

from __future__ import annotations

DOCUMENTATION = r"""
module: cipherbench_config
short_description: Put cipherbench fleet's lines into sshd or nginx config, checked before and after writing
description:
  - C(software=sshd). The lines go where sshd reads them first. When
    C(config) (sshd_config) includes C(dropin_dir/*.conf) (Debian 12 and 13 do, as
    their first line), into the drop-in C(dropin_dir/dropin_name) (sorting first),
    and any block of ours at the top of sshd_config is removed; else into a block
    at the top of sshd_config. A C(HostKeyAlgorithms) line keeps only algorithms of
    host keys this sshd really loads (C(sshd -T), C(ssh-keygen -l)) and is left out
    when none would remain. The new files are checked with C(sshd -t) together with
    the whole configuration (a wrapper that includes the new drop-in and then the
    new sshd_config) before anything is written; after writing, C(sshd -T) must
    show every line (else an earlier value wins: everything is put back and the
    task fails).
  - C(software=nginx). The directives the lines set (C(ssl_protocols),
    C(ssl_ciphers), C(ssl_prefer_server_ciphers), C(ssl_ecdh_curve),
    C(ssl_conf_command)) that stand directly in the C(http {}) block of C(config)
    are commented out (C(# cipherbench fleet replaced: ...)) and the lines are put
    where the first of them stood (else at the top of the http block), so a stock
    Debian nginx.conf passes C(nginx -t). Checked with C(nginx -t) before it is
    written; after writing, C(nginx -T) must show every line. Settings in server
    blocks or other files win where they stand; they are returned in C(overridden).
  - A check that fails writes nothing and leaves no backup; a file that changed
    keeps one backup (C(NAME.PID.DATE~)). Supports check mode and diff.
  - C(state=absent) takes our lines out again (nginx's own directives are
    uncommented). C(state=restored) puts back C(writes) from an earlier run of this
    module (each backup moved back over its file, a file it created removed), so
    no backup is left.
options:
  software: {type: str, choices: [sshd, nginx], required: true}
  config: {description: sshd_config or nginx.conf., type: path, required: true}
  state: {type: str, choices: [present, absent, restored], default: present}
  lines: {type: list, elements: str, default: []}
  comment: {description: Comment lines put first in the block (without the leading C(# )), type: list, elements: str, default: []}
  binary: {description: The sshd or nginx binary., type: path}
  dropin_dir: {type: path, default: /etc/ssh/sshd_config.d}
  dropin_name: {type: str, default: 00-cipherbench.conf}
  marker: {type: str, default: cipherbench fleet}
  writes: {description: For C(state=restored), the C(writes) an earlier run returned., type: list, elements: dict, default: []}
"""

RETURN = r"""
missing: {description: C(config) does not exist (nothing done)., type: bool}
writes: {description: The files changed, each with C(path), C(backup_file) (when it existed) and C(created)., type: list}
where: {description: C(drop-in), C(top of sshd_config) or C(http block)., type: str}
lines: {description: The lines written (after the host-key guard)., type: list}
overridden: {description: nginx -T lines that set the same directives elsewhere (server blocks, other files)., type: list}
"""

import os
import re
import tempfile

from ansible.module_utils.basic import AnsibleModule

NGINX_DIRECTIVES = ["ssl_protocols", "ssl_ciphers", "ssl_prefer_server_ciphers", "ssl_ecdh_curve", "ssl_conf_command"]

REPLACED = "# cipherbench fleet replaced: "


def begin(marker):
    return "# BEGIN " + marker


def end(marker):
    return "# END " + marker


def marker_re(word, marker):
    # Our markers, also the ones an earlier version wrote: "(class)" / "(fleet)".
    return re.compile(r"^\s*# " + word + " " + re.escape(marker) + r"( \((class|fleet)\))?\s*$")


def block_lines(p, indent=""):
    out = [indent + begin(p["marker"])]
    out += [indent + "# " + c for c in p["comment"]]
    out += [indent + l for l in p["lines"]]
    out.append(indent + end(p["marker"]))
    return out


def split_lines(text):
    """Lines with their ends, so that joining gives the text back."""
    return text.splitlines(True)


def remove_blocks(lines, marker):
    """Drops every block of ours; returns (lines, index where the first stood or None)."""
    b, e = marker_re("BEGIN", marker), marker_re("END", marker)
    out, at, i = [], None, 0
    while i < len(lines):
        if b.match(lines[i]):
            j = i + 1
            while j < len(lines) and not e.match(lines[j]):
                j += 1
            if j == len(lines):
                raise ValueError("line %d: %s without its END marker" % (i + 1, lines[i].strip()))
            if at is None:
                at = len(out)
            i = j + 1
            continue
        out.append(lines[i])
        i += 1
    return out, at


def nl(lines):
    return [l + "\n" for l in lines]


def top(text, p, present):
    lines, _ = remove_blocks(split_lines(text), p["marker"])
    if present:
        lines = nl(block_lines(p)) + lines
    return "".join(lines)


def whole_file(p):
    return "".join(nl(block_lines(p)))


class Nginx:
    """Just enough of nginx's syntax: statements, blocks, comments and quotes."""

    def __init__(self, text):
        self.text = text
        # (depth, first word, start offset, end offset (after ';' or '{'), ends with '{')
        self.statements = []
        self.http = None  # (offset of '{', offset of matching '}')
        self._scan()

    def _scan(self):
        t, i, n = self.text, 0, len(self.text)
        depth, words, start, word = 0, [], None, None
        opens = []
        while i < n:
            c = t[i]
            if c == "#":
                while i < n and t[i] != "\n":
                    i += 1
                continue
            if c in "\"'":
                q, j = c, i + 1
                while j < n and t[j] != q:
                    j += 2 if t[j] == "\\" else 1
                if start is None:
                    start = i
                words.append(t[i:j + 1])
                i = j + 1
                continue
            if c.isspace():
                if word is not None:
                    words.append(t[word:i])
                    word = None
                i += 1
                continue
            if c in ";{}":
                if word is not None:
                    words.append(t[word:i])
                    word = None
                if c == "}":
                    if not opens:
                        raise ValueError("unbalanced '}' at line %d" % (t.count("\n", 0, i) + 1))
                    o, name = opens.pop()
                    depth -= 1
                    if name == "http" and depth == 0 and self.http is None:
                        self.http = (o, i)
                    words, start = [], None
                else:
                    name = words[0] if words else ""
                    self.statements.append((depth, name, start if start is not None else i, i + 1, c == "{"))
                    if c == "{":
                        opens.append((i, name))
                        depth += 1
                    words, start = [], None
                i += 1
                continue
            if word is None:
                word = i
                if start is None:
                    start = i
            i += 1
        if opens:
            raise ValueError("a block opened at line %d is not closed" % (t.count("\n", 0, opens[-1][0]) + 1))


def line_start(text, i):
    return text.rfind("\n", 0, i) + 1


def line_end(text, i):
    j = text.find("\n", i)
    return len(text) if j < 0 else j + 1


def nginx_http(text, p, present):
    lines, at = remove_blocks(split_lines(text), p["marker"])
    text = "".join(lines)
    conf = Nginx(text)
    if conf.http is None:
        raise ValueError("no http { } block")
    h_open, h_close = conf.http
    if not present:
        # Put back what we commented out, inside the http block.
        out, pos = [], 0
        for l in split_lines(text):
            s = l.lstrip()
            if h_open <= pos <= h_close and s.startswith(REPLACED):
                l = l[: len(l) - len(s)] + s[len(REPLACED):]
            out.append(l)
            pos += len(l)
        return "".join(out)
    taken = [s for s in conf.statements if s[0] == 1 and h_open < s[2] < h_close and s[1] in p["takeover"] and not s[4]]
    # Comment out whole lines: each statement must stand on lines of its own.
    spans = []
    for _, name, s, e, _ in taken:
        ls, le = line_start(text, s), line_end(text, e - 1)
        before, after = text[ls:s], text[e:le].strip()
        if before.strip() or (after and not after.startswith("#")):
            raise ValueError(
                "line %d: %s shares its line with another statement; put it on a line of its own"
                % (text.count("\n", 0, s) + 1, name)
            )
        spans.append((ls, le))
    out, pos, first = [], 0, None
    for ls, le in spans:
        out.append(text[pos:ls])
        chunk = text[ls:le]
        commented = []
        for l in split_lines(chunk):
            s = l.lstrip()
            commented.append(l[: len(l) - len(s)] + REPLACED + s if s.strip() else l)
        if first is None:
            first = sum(len(x) for x in out)
        out.append("".join(commented))
        pos = le
    out.append(text[pos:])
    text = "".join(out)
    # Where the block goes: where our old block stood, else where the first
    # replaced directive stood, else at the top of the http block.
    if at is not None:
        # Commenting out keeps the line count, so `at` still counts lines here.
        ins = sum(len(l) for l in split_lines(text)[:at])
    elif first is not None:
        ins = first
    else:
        ins = h_open + 1
        rest = text[ins:line_end(text, ins)]
        if rest.strip() == "" and rest.endswith("\n"):
            ins += len(rest)
        else:
            text = text[:ins] + "\n" + text[ins:]
            ins += 1
    indent = re.match(r"[ \t]*", text[ins:]).group(0) if text[ins:ins + 1] in (" ", "\t") else ""
    if not indent:
        inner = [s for s in conf.statements if s[0] == 1 and h_open < s[2] < h_close]
        indent = text[line_start(text, inner[0][2]):inner[0][2]] if inner else "    "
        if indent.strip():
            indent = "    "
    block = "".join(nl(block_lines(p, indent)))
    return text[:ins] + block + text[ins:]


def read(path):
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "surrogateescape")


class Run:
    def __init__(self, module):
        self.m = module
        self.p = module.params
        self.made = []

    def fail(self, msg, **kw):
        self.cleanup()
        self.m.fail_json(msg=msg, **kw)

    def temp(self, content, directory):
        fd, path = tempfile.mkstemp(dir=directory, prefix=".cipherbench-check-")
        self.made.append(path)
        with os.fdopen(fd, "wb") as f:
            f.write(content.encode("utf-8", "surrogateescape"))
        return path

    def cleanup(self):
        for f in self.made:
            if os.path.exists(f):
                os.unlink(f)
        self.made = []

    def run(self, argv, what):
        rc, out, err = self.m.run_command(argv)
        if rc != 0:
            self.fail("%s: `%s` fails (nothing written, no backup): %s" % (self.p["config"], what, (err or out).strip()[-2000:]), rc=rc)
        return out

    def write(self, path, content, old):
        """Writes `content` to `path` atomically, with a backup of what was there."""
        w = dict(path=path, created=old is None)
        if content is None:
            if old is not None:
                w["backup_file"] = self.m.backup_local(path)
                os.unlink(path)
            return w
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path) or ".", prefix=".cipherbench-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(content.encode("utf-8", "surrogateescape"))
            if old is None:
                os.chmod(tmp, 0o644)
            else:
                w["backup_file"] = self.m.backup_local(path)
            self.m.atomic_move(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return w


def put_back(writes):
    for w in reversed(writes):
        if w.get("backup_file"):
            os.rename(w["backup_file"], w["path"])
        elif w.get("created") and os.path.exists(w["path"]):
            os.unlink(w["path"])


def usable_hostkey_algorithms(r, sshd, config):
    out = r.run([sshd, "-T", "-f", config], "sshd -T -f " + config)
    algs = []
    for line in out.splitlines():
        f = line.split()
        if len(f) != 2 or f[0] != "hostkey":
            continue
        for k in (f[1], f[1] + ".pub"):
            rc, o, _ = r.m.run_command(["ssh-keygen", "-l", "-f", k])
            if rc == 0 and o.split():
                bits, kind = o.split()[0], o.split()[-1]
                if kind == "(ED25519)":
                    algs.append("ssh-ed25519")
                elif kind == "(ECDSA)":
                    algs.append("ecdsa-sha2-nistp" + bits)
                elif kind == "(RSA)":
                    algs += ["rsa-sha2-512", "rsa-sha2-256"]
                break
    return algs


def sshd_plan(r, present):
    """The files to write: [(path, new content or None to remove, old content)]."""
    p = r.p
    config, lines = p["config"], list(p["lines"])
    old_main = read(config)
    if present:
        # Never leave sshd without a usable host key.
        usable = usable_hostkey_algorithms(r, p["binary"], config)
        kept = []
        for l in lines:
            if l.startswith("HostKeyAlgorithms "):
                algs = [a for a in l.split(" ", 1)[1].split(",") if a in usable]
                if not algs:
                    continue
                l = "HostKeyAlgorithms " + ",".join(algs)
            kept.append(l)
        lines = kept
    q = dict(p, lines=lines)
    include = re.compile(r"(?m)^[ \t]*Include[ \t]+" + re.escape(p["dropin_dir"].rstrip("/")) + r"/\*\.conf[ \t]*$")
    dropin = os.path.join(p["dropin_dir"], p["dropin_name"])
    old_dropin = read(dropin)
    ours = old_dropin is not None and marker_re("BEGIN", p["marker"]).match(old_dropin.split("\n", 1)[0])
    plan = []
    if include.search(old_main):
        where = "drop-in " + dropin
        plan.append((dropin, whole_file(q) if present else (None if ours else old_dropin), old_dropin))
        plan.append((config, top(old_main, q, False), old_main))
    else:
        where = "top of " + config
        plan.append((config, top(old_main, q, present), old_main))
        if ours:
            plan.append((dropin, None, old_dropin))
    return [x for x in plan if x[1] != x[2]], where, lines


def sshd_check(r, plan):
    """sshd -t on the new files together, before anything is written."""
    p = r.p
    new = {path: new for path, new, _ in plan}
    tmpdir = r.m.tmpdir
    main = r.temp(new[p["config"]], tmpdir) if p["config"] in new else p["config"]
    dropin = os.path.join(p["dropin_dir"], p["dropin_name"])
    if new.get(dropin) is not None:
        # The new drop-in first, then the new sshd_config (its Include reads the
        # drop-in directory as it is now, after ours: sshd keeps the first value).
        main = r.temp("Include %s\nInclude %s\n" % (r.temp(new[dropin], tmpdir), main), tmpdir)
    r.run([p["binary"], "-t", "-f", main], "sshd -t")


def sshd_effective(r, lines):
    out = r.run([r.p["binary"], "-T", "-f", r.p["config"]], "sshd -T")
    have = set(l.strip().lower() for l in out.splitlines())
    return [l for l in lines if not l.startswith("#") and l.strip().lower() not in have]


def nginx_plan(r, present):
    p = r.p
    old = read(p["config"])
    try:
        new = nginx_http(old, dict(p, takeover=NGINX_DIRECTIVES), present)
    except ValueError as e:
        r.fail("%s: cannot edit: %s (nothing written)" % (p["config"], e))
    return ([(p["config"], new, old)] if new != old else []), "http block of " + p["config"], list(p["lines"])


def nginx_check(r, plan):
    for path, new, _ in plan:
        # Beside the file: nginx resolves relative includes from its directory.
        r.run([r.p["binary"], "-t", "-c", r.temp(new, os.path.dirname(path) or ".")], "nginx -t")


def nginx_effective(r, lines):
    out = r.run([r.p["binary"], "-T", "-c", r.p["config"]], "nginx -T")
    dump = [l.strip() for l in out.splitlines()]
    missing = [l for l in lines if not l.startswith("#") and l.strip() not in dump]
    ours = set(l.strip() for l in lines)
    others = [l for l in dump if re.split(r"\s", l, maxsplit=1)[0] in NGINX_DIRECTIVES and l not in ours]
    return missing, others


def main():
    module = AnsibleModule(
        argument_spec=dict(
            software=dict(type="str", choices=["sshd", "nginx"], required=True),
            config=dict(type="path", required=True),
            state=dict(type="str", choices=["present", "absent", "restored"], default="present"),
            lines=dict(type="list", elements="str", default=[]),
            comment=dict(type="list", elements="str", default=[]),
            binary=dict(type="path"),
            dropin_dir=dict(type="path", default="/etc/ssh/sshd_config.d"),
            dropin_name=dict(type="str", default="00-cipherbench.conf"),
            marker=dict(type="str", default="cipherbench fleet"),
            writes=dict(type="list", elements="dict", default=[]),
        ),
        supports_check_mode=True,
    )
    p = module.params
    r = Run(module)
    for l in p["lines"] + p["comment"]:
        if any(ord(c) < 0x20 or ord(c) == 0x7F for c in l):
            module.fail_json(msg="%s: a line holds a control character (a line break?): %r" % (p["config"], l))
    if "/" in p["dropin_name"] or p["dropin_name"].startswith("."):
        module.fail_json(msg="dropin_name must be a plain file name: %r" % p["dropin_name"])
    result = dict(changed=False, missing=False, writes=[], overridden=[])

    if p["state"] == "restored":
        result["changed"] = bool(p["writes"])
        if not module.check_mode:
            put_back(p["writes"])
        module.exit_json(**result)

    if not os.path.exists(p["config"]):
        result["missing"] = True
        module.exit_json(**result)
    if not p["binary"]:
        p["binary"] = "/usr/sbin/" + p["software"]
    present = p["state"] == "present"
    sshd = p["software"] == "sshd"
    plan, where, lines = (sshd_plan if sshd else nginx_plan)(r, present)
    result.update(where=where, lines=lines)
    if not plan:
        module.exit_json(**result)
    result["changed"] = True
    result["diff"] = [
        dict(before=old or "", after=new or "", before_header=path if old is not None else "/dev/null",
             after_header=path if new is not None else "/dev/null")
        for path, new, old in plan
    ]
    (sshd_check if sshd else nginx_check)(r, plan)
    r.cleanup()
    if module.check_mode:
        module.exit_json(**result)
    writes = [r.write(path, new, old) for path, new, old in plan]
    result["writes"] = writes
    if present:
        if sshd:
            missing, others = sshd_effective(r, lines), []
        else:
            missing, others = nginx_effective(r, lines)
        if missing:
            put_back(writes)
            module.fail_json(
                msg="%s: written, but %s does not show %s: an earlier setting wins (%s); put back as it was"
                % (where, "sshd -T" if sshd else "nginx -T", "; ".join(missing),
                   "a drop-in that sorts before %s, or a line before the Include" % p["dropin_name"] if sshd
                   else "an include before the http block's own settings?"),
                writes=[],
            )
        result["overridden"] = others
    module.exit_json(**result)


if __name__ == "__main__":
    main()
