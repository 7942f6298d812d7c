include $(sort $(wildcard $(BR2_EXTERNAL_FLASHSCOPE_PATH)/package/*/*.mk))
