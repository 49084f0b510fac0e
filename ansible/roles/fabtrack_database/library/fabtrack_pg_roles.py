#!/usr/bin/python3
# -*- coding: utf-8 -*-
# fabtrack: PostgreSQL roles and the database, idempotently, through psql.
# The Debian ansible-core package ships no community.postgresql collection,
# and the target has psql but not necessarily psycopg2, hence this module.

DOCUMENTATION = r"""
---
module: fabtrack_pg_roles
short_description: PostgreSQL group and login roles and the fabtrack database, through psql
description:
  - Ensures NOLOGIN group roles exist, login roles exist with the given attributes, group
    memberships, per-role settings and password, and optionally that a database exists with
    the given owner.
  - Passwords never reach the server or a command line in clear text. The module computes a
    SCRAM-SHA-256 verifier locally (as psql's \password does) and sends that; an existing
    verifier is checked against the password, so an unchanged password changes nothing.
  - Reads pg_authid, so the connection must be a superuser's.
options:
  conninfo:
    description: libpq connection string of an administrator (superuser); no password in it.
    type: str
    required: true
  psql:
    description: psql binary.
    type: str
    default: psql
  run_as:
    description: >-
      Run psql as this OS account (runuser -u ACCOUNT), e.g. postgres for peer
      authentication on the system PostgreSQL's socket; empty runs it as the connecting user.
    type: str
    default: ""
  groups:
    description: NOLOGIN group roles to create when missing.
    type: list
    elements: str
    default: []
  logins:
    description: >-
      Login roles. Each is a dict with name, password (empty or missing leaves the password as
      it is), member_of (list of roles), connection_limit (default -1), settings (dict of
      ALTER ROLE ... SET parameters), createrole (default false).
    type: list
    elements: raw
    default: []
  database:
    description: Database name to create when missing (with owner); empty for none.
    type: str
    default: ""
  database_owner:
    description: Owner of a database created by this module (and ensured on an existing one).
    type: str
    default: ""
author: fabtrack
"""

RETURN = r"""
actions:
  description: What was (or in check mode would be) done, without any secret.
  returned: always
  type: list
  elements: str
"""

import base64
import hashlib
import hmac
import json
import os
import re
import unicodedata

from ansible.module_utils.basic import AnsibleModule

SCRAM_ITERATIONS = 4096
SETTING_NAME = re.compile(r"^[a-z_][a-z0-9_.]*$")


def quote_ident(name):
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value):
    return "'" + str(value).replace("'", "''") + "'"


def normalize_password(password):
    # PostgreSQL applies SASLprep; for ASCII it is the identity, NFKC covers the mapping of
    # the usual non-ASCII cases (the verifier and the check use the same rule).
    if all(ord(c) < 128 for c in password):
        return password.encode()
    return unicodedata.normalize("NFKC", password).encode()


def scram_keys(password, salt, iterations):
    salted = hashlib.pbkdf2_hmac("sha256", normalize_password(password), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    return stored_key, server_key


def scram_verifier(password):
    salt = os.urandom(16)
    stored_key, server_key = scram_keys(password, salt, SCRAM_ITERATIONS)
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    return "SCRAM-SHA-256$%d:%s$%s:%s" % (SCRAM_ITERATIONS, b64(salt), b64(stored_key), b64(server_key))


def scram_matches(verifier, password):
    m = re.match(r"^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$", verifier or "")
    if not m:
        return False
    try:
        salt = base64.b64decode(m.group(2))
        stored_key, server_key = scram_keys(password, salt, int(m.group(1)))
        return hmac.compare_digest(stored_key, base64.b64decode(m.group(3))) and hmac.compare_digest(
            server_key, base64.b64decode(m.group(4)))
    except (ValueError, TypeError):
        return False


def setting_value(value):
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)


class Psql(object):
    def __init__(self, module):
        self.module = module
        prefix = ["runuser", "-u", module.params["run_as"], "--"] if module.params["run_as"] else []
        self.base = prefix + [module.params["psql"], "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-d",
                     module.params["conninfo"]]

    def run(self, sql):
        # SQL on stdin: nothing of it (verifiers included) appears in the process list.
        rc, out, err = self.module.run_command(self.base, data=sql, binary_data=True,
                                               environ_update={"PGAPPNAME": "fabtrack-ansible"})
        if rc != 0:
            self.module.fail_json(msg="psql failed: %s" % err.strip(), rc=rc)
        return out

    def state(self, names, database):
        names_sql = "ARRAY[%s]::text[]" % ",".join(quote_literal(n) for n in names) if names else "ARRAY[]::text[]"
        sql = """
SELECT json_build_object(
  'roles', (SELECT coalesce(json_object_agg(a.rolname, json_build_object(
      'login', a.rolcanlogin, 'super', a.rolsuper, 'createdb', a.rolcreatedb,
      'createrole', a.rolcreaterole, 'replication', a.rolreplication, 'inherit', a.rolinherit,
      'connlimit', a.rolconnlimit, 'password', a.rolpassword,
      'member_of', (SELECT coalesce(json_agg(g.rolname), '[]'::json) FROM pg_auth_members m
                    JOIN pg_roles g ON g.oid = m.roleid WHERE m.member = a.oid),
      'settings', (SELECT s.setconfig FROM pg_db_role_setting s
                   WHERE s.setrole = a.oid AND s.setdatabase = 0))), '{}'::json)
    FROM pg_authid a WHERE a.rolname = ANY(%s)),
  'database_owner', (SELECT pg_get_userbyid(d.datdba) FROM pg_database d WHERE d.datname = %s));
""" % (names_sql, quote_literal(database))
        return json.loads(self.run(sql))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            conninfo=dict(type="str", required=True),
            psql=dict(type="str", default="psql"),
            run_as=dict(type="str", default=""),
            groups=dict(type="list", elements="str", default=[]),
            logins=dict(type="list", elements="raw", default=[], no_log=False),
            database=dict(type="str", default=""),
            database_owner=dict(type="str", default=""),
        ),
        supports_check_mode=True,
    )
    p = module.params
    if re.search(r"password\s*=", p["conninfo"]):
        module.fail_json(msg="conninfo carries a password: use PGPASSFILE or peer authentication")
    logins = []
    for spec in p["logins"]:
        if not isinstance(spec, dict) or not spec.get("name"):
            module.fail_json(msg="every login must be a dict with a name")
        password = spec.get("password") or ""
        if password:
            module.no_log_values.add(password)
        for key in (spec.get("settings") or {}):
            if not SETTING_NAME.match(key):
                module.fail_json(msg="bad setting name %r for role %s" % (key, spec["name"]))
        logins.append(dict(
            name=spec["name"], password=password, member_of=list(spec.get("member_of") or []),
            connection_limit=int(spec.get("connection_limit", -1)),
            settings=dict((k, setting_value(v)) for k, v in (spec.get("settings") or {}).items()),
            createrole=bool(spec.get("createrole", False))))

    psql = Psql(module)
    names = list(p["groups"]) + [l["name"] for l in logins]
    state = psql.state(names, p["database"])
    roles = state["roles"]
    statements, actions = [], []

    for g in p["groups"]:
        if g not in roles:
            statements.append("CREATE ROLE %s NOLOGIN;" % quote_ident(g))
            actions.append("create group role %s" % g)

    for l in logins:
        name, ident = l["name"], quote_ident(l["name"])
        cur = roles.get(name)
        attrs = "LOGIN NOSUPERUSER NOCREATEDB %s NOREPLICATION INHERIT CONNECTION LIMIT %d" % (
            "CREATEROLE" if l["createrole"] else "NOCREATEROLE", l["connection_limit"])
        if cur is None:
            statements.append("CREATE ROLE %s %s;" % (ident, attrs))
            actions.append("create login role %s" % name)
            cur = dict(password=None, member_of=[], settings=None)
        elif (not cur["login"] or cur["super"] or cur["createdb"] or cur["replication"] or not cur["inherit"]
              or cur["createrole"] != l["createrole"] or cur["connlimit"] != l["connection_limit"]):
            statements.append("ALTER ROLE %s %s;" % (ident, attrs))
            actions.append("set attributes of %s" % name)
        if l["password"] and not scram_matches(cur["password"], l["password"]):
            statements.append("ALTER ROLE %s PASSWORD %s;" % (ident, quote_literal(scram_verifier(l["password"]))))
            actions.append("set password of %s" % name)
        for g in l["member_of"]:
            if g not in cur["member_of"]:
                statements.append("GRANT %s TO %s;" % (quote_ident(g), ident))
                actions.append("grant %s to %s" % (g, name))
        current_settings = dict(s.split("=", 1) for s in (cur["settings"] or []))
        for k, v in sorted(l["settings"].items()):
            if current_settings.get(k) != v:
                statements.append("ALTER ROLE %s SET %s = %s;" % (ident, k, quote_literal(v)))
                actions.append("set %s = %s for %s" % (k, v, name))

    create_db = False
    if p["database"]:
        owner = p["database_owner"]
        if state["database_owner"] is None:
            create_db = True
            actions.append("create database %s" % p["database"])
        elif owner and state["database_owner"] != owner:
            actions.append("set owner of database %s to %s" % (p["database"], owner))

    changed = bool(actions)
    if changed and not module.check_mode:
        if statements:
            psql.run("SET client_min_messages = warning;\nBEGIN;\n%s\nCOMMIT;\n" % "\n".join(statements))
        if p["database"]:
            owner_sql = (" OWNER %s" % quote_ident(p["database_owner"])) if p["database_owner"] else ""
            if create_db:
                # CREATE DATABASE cannot run inside a transaction block.
                psql.run("CREATE DATABASE %s%s;\n" % (quote_ident(p["database"]), owner_sql))
            elif owner_sql:
                psql.run("ALTER DATABASE %s%s;\n" % (quote_ident(p["database"]), owner_sql))
    module.exit_json(changed=changed, actions=actions)


if __name__ == "__main__":
    main()
