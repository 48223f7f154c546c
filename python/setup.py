"""Builds the wgtensor Python package: the extension wgtensor._core (python/src/*.c) with
libwgtensor.a linked in statically, and the pure-Python layer (python/wgtensor/).

The static library, and the linker flags for its BLAS, come from the project's Makefile
(`make python-link`, which builds libwgtensor.a first when needed), so this works offline from
a checkout: `make python`, or `python3 -m pip install --no-build-isolation ./python` in a venv
(docs/python.md). Dawn (.deps/dawn/libwebgpu_wrapper.so, fetched by scripts/setup.sh) is copied
into the package as wgtensor/wgtensor/libwebgpu_wrapper.so: the library's loader looks in
`wgtensor/` beside the module that contains it, which is the extension itself.
"""
import glob
import os
import shutil
import subprocess

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BUILD = os.path.abspath(os.environ.get("WGT_BUILD", os.path.join(ROOT, "build")))
DAWN = os.path.join(ROOT, ".deps", "dawn", "libwebgpu_wrapper.so")


def version():
    with open(os.path.join(ROOT, "include", "wgtensor.h")) as f:
        for line in f:
            if line.startswith("#define WGT_VERSION_STRING"):
                return line.split('"')[1]
    raise RuntimeError("no WGT_VERSION_STRING in include/wgtensor.h")


class BuildExt(build_ext):
    def build_extensions(self):
        out = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, "BUILD=" + BUILD, "python-link"],
                             check=True, stdout=subprocess.PIPE, text=True).stdout.split()
        if not out or not out[0].endswith("libwgtensor.a"):
            raise RuntimeError("make python-link printed %r, not the library and its flags" % out)
        for ext in self.extensions:
            # --exclude-libs: the library's symbols stay inside the extension (no clash with
            # another libwgtensor loaded in the same process).
            ext.extra_link_args = out + ["-Wl,--exclude-libs,ALL"]
            ext.depends = [out[0]] + glob.glob(os.path.join(HERE, "src", "*.h"))
        super().build_extensions()
        if os.path.exists(DAWN):
            dst_dir = os.path.join(self.build_lib, "wgtensor", "wgtensor")
            dst = os.path.join(dst_dir, "libwebgpu_wrapper.so")
            os.makedirs(dst_dir, exist_ok=True)
            if not os.path.exists(dst) or os.path.getsize(dst) != os.path.getsize(DAWN) or \
                    os.path.getmtime(dst) < os.path.getmtime(DAWN):
                shutil.copy2(DAWN, dst)


core = Extension(
    "wgtensor._core",
    sources=sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, "src", "*.c"))),
    include_dirs=[os.path.join(ROOT, "include")],
    extra_compile_args=["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers",
                        "-Wno-cast-function-type", "-Werror=implicit-function-declaration"],
)

setup(
    name="wgtensor",
    version=version(),
    description="Tensor math on any GPU through WebGPU, with NumPy interop",
    packages=["wgtensor"],
    ext_modules=[core],
    cmdclass={"build_ext": BuildExt},
    python_requires=">=3.10",
    install_requires=[],  # numpy: Debian's python3-numpy (a venv made with --system-site-packages sees it)
    zip_safe=False,
)
