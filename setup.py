"""What pyproject.toml cannot say: the bundled sample. Its one copy is at the repository root
(``tools.yaml`` and ``sample_tools/``); a build maps it into the package with the same layout,
``agentdbg/_sample/tools.yaml`` + ``agentdbg/_sample/sample_tools/``, so its handlers resolve the
same way there (see ``toolspec.bundled_tools_path``) and nothing named ``sample_tools`` lands at
the top of site-packages."""

from setuptools import find_packages, setup

SAMPLE = "agentdbg._sample.sample_tools"

setup(
    packages=[*find_packages(include=["agentdbg", "agentdbg.*"]), SAMPLE],
    package_dir={SAMPLE: "sample_tools"},
    package_data={
        SAMPLE: ["../tools.yaml"],                   # lands beside the folder, as at the root
        "agentdbg": ["py.typed", "locale/*.po"],     # its types (PEP 561); the catalogs (--lang)
        "agentdbg.server.live": ["assets/*.js", "assets/*.css"],
    },
)
