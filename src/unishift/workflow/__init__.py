"""The workflow machinery: what runs the science as a Snakemake workflow, and nothing the science
needs. The science (every other package of unishift) never imports this package
(tests/project/test_layers.py); the machinery imports the science.

- :mod:`~unishift.workflow.config_access`: a run's results folder, record layout and config values
- :mod:`~unishift.workflow.checks`: a config's checks before any job runs, and damaged intermediates
- :mod:`~unishift.workflow.prepare`: the one call of ``workflow/rules/common.smk`` that prepares a run
- :mod:`~unishift.workflow.jobs`: the start of every workflow script (logging, threads, records);
  :mod:`~unishift.workflow.lm_jobs`: the language-model scripts' start (the hub offline first)
- :mod:`~unishift.workflow.job_server`: local jobs forked from one process that imported the stack
- (in the shared base, since the API checks a run with it) :mod:`~unishift.output_records`: the record beside each output of the inputs it was made
  from (a changed or damaged input is caught before a job reads it)
- :mod:`~unishift.workflow.code_version`: the hash of the library code a job runs (reruns)
- :mod:`~unishift.workflow.provenance`: ``results/provenance.json``
- :mod:`~unishift.workflow.run_lock`: one run at a time per results folder
- :mod:`~unishift.workflow.domain_weight_artifacts`: the domain-weight plans' files
- command-line helpers, ``python -m unishift.workflow.<name>``: ``config_docs`` (writes
  config/README.md's key reference), ``catalogue`` (every method and its parameters), ``checks``
  (a config's checks), ``job_server``
"""
