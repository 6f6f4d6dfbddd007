# written by mpiscope tune: add to a job script
export MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE=OUT/mpich-selection.json
export MPIR_CVAR_DEVICE_COLLECTIVES=percoll
export MPIR_CVAR_BCAST_DEVICE_COLLECTIVE=0
# or on the command line: mpiexec -genv MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE OUT/mpich-selection.json -genv MPIR_CVAR_DEVICE_COLLECTIVES percoll -genv MPIR_CVAR_BCAST_DEVICE_COLLECTIVE 0 ...
