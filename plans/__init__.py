"""dlplan's plan reader and reference executor, as a package.

The modules import one another relatively when loaded as a package
(python3 -m plans.dlplan_train, or the installed share/dlplan directory
on PYTHONPATH) and by name when run as scripts (python3 dlplan_train.py:
Python puts the script's directory first on the module path).
"""
