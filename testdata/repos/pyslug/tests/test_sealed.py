import os
import socket


def test_environment_is_the_base_commits():
    # setup.sh of the base commit ran; the model's edit of it never did.
    assert os.path.exists("/opt/base-setup-ran")
    assert not os.path.exists("/opt/model-was-here")


def test_no_network():
    try:
        socket.getaddrinfo("pkgs", 8080)
    except OSError:
        return
    raise AssertionError("a name resolves in the sandbox")
