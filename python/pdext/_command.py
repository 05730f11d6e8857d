"""The `pdext` command of a pip install: the console script runs the pdext executable that
the wheel carries beside its libraries (<package>/bin/pdext), with the same arguments, so that
`pdext build`, `pdext bundle`, `pdext demo` work from a venv's PATH as from a system install.
The executable finds libpdext by its relative RPATH; replacing this process keeps signals and
exit codes the command's own."""

import os
import sys


def executable():
    """The path of the pdext executable of this install."""
    from . import lib_dir

    return os.path.join(os.path.dirname(lib_dir()), "bin", "pdext")


def main():
    path = executable()
    if not os.access(path, os.X_OK):
        sys.stderr.write(
            "pdext: the pdext executable is missing (%s); this pdext package comes without its "
            "command (a build tree?): reinstall it with pip install --force-reinstall pdext\n" % path
        )
        return 127
    os.execv(path, [path] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
