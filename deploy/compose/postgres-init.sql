-- One database per service that keeps tables; no service reads another's.
CREATE DATABASE gantry_admission;
CREATE DATABASE gantry_billing;
