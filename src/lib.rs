//! quiche glue shared by the apps.
