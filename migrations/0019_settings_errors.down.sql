DROP TABLE settings_errors;
