# written by mpiscope tune: add to a job script
export OMPI_MCA_coll_tuned_use_dynamic_rules=1
export OMPI_MCA_coll_tuned_dynamic_rules_filename=OUT/ompi-rules.conf
# or on the command line: mpirun --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename OUT/ompi-rules.conf ...
