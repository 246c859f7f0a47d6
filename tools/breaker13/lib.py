"""breaker13's defaults (its serve.sh's port and admin token) over the
helpers every hostile run shares (tools/hostile/chatd_lib.py).

Environment: CHATD_URL (default http://127.0.0.1:18300), CHATD_ADMIN_TOKEN
(default breaker13-admin-token-0123456789). Start a server with serve.sh.
"""
import os
import sys

os.environ.setdefault("CHATD_URL", "http://127.0.0.1:18300")
os.environ.setdefault("CHATD_ADMIN_TOKEN", "breaker13-admin-token-0123456789")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hostile"))

from chatd_lib import *  # noqa: E402,F401,F403
from chatd_lib import RUN, URL, WS, ADMIN  # noqa: E402,F401
