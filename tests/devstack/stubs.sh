# Minimal stand-ins for the devstack functions our plugin uses. Calls that
# would act on the system are recorded in $DEVSTACK_CALLS.
_INI="$PYTHON $(dirname "${BASH_SOURCE[0]}")/ini.py"

function iniget { $_INI get "$@"; }
function iniget_multiline { $_INI get_multiline "$@"; }
function iniset { $_INI set "$@"; }
function iniset_multiline { $_INI set_multiline "$@"; }
function iniadd { $_INI add "$@"; }
function inidelete { $_INI delete "$@"; }
function trueorfalse {
    local default=$1 value=${!2:-}
    case "${value,,}" in
        1|yes|true|on) echo True ;;
        0|no|false|off) echo False ;;
        *) echo $default ;;
    esac
}
function define_plugin { echo "define_plugin $*" >> $DEVSTACK_CALLS; }
function echo_summary { :; }
function setup_develop { echo "setup_develop $*" >> $DEVSTACK_CALLS; }
function pip_uninstall { echo "pip_uninstall $*" >> $DEVSTACK_CALLS; }
function openstack {
    echo "openstack $*" >> $DEVSTACK_CALLS
    # 'aggregate show' and 'policy scope show' of what is missing fail,
    # like the real client; 'aggregate create -c uuid' prints one
    case "$*" in
        *"aggregate create"*) echo 00000000-0000-4000-8000-0000000000a1 ;;
        *" show "*) return 1 ;;
    esac
}
function run_process { echo "run_process $*" >> $DEVSTACK_CALLS; }
function stop_process { echo "stop_process $*" >> $DEVSTACK_CALLS; }
function get_or_create_role { echo "get_or_create_role $*" >> $DEVSTACK_CALLS; }
function get_or_add_user_project_role { echo "get_or_add_user_project_role $*" >> $DEVSTACK_CALLS; }
function create_service_user { echo "create_service_user $*" >> $DEVSTACK_CALLS; }
function get_or_create_service { echo "get_or_create_service $*" >> $DEVSTACK_CALLS; }
function get_or_create_endpoint { echo "get_or_create_endpoint $*" >> $DEVSTACK_CALLS; }
function wait_for_service { echo "wait_for_service $*" >> $DEVSTACK_CALLS; }
# devstack writes [keystone_authtoken] (or the named section) credentials
function configure_keystone_authtoken_middleware {
    local conf=$1 user=$2 section=${3:-keystone_authtoken}
    echo "configure_keystone_authtoken_middleware $*" >> $DEVSTACK_CALLS
    iniset $conf $section auth_type password
    iniset $conf $section username $user
}
function sudo { "$@"; }
function rabbitmqctl { echo "rabbitmqctl $*" >> $DEVSTACK_CALLS; }
