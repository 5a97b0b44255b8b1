#!/bin/bash
# devstack plugin of nova-scoped-policies: installs the package where nova
# runs and enables its scheduler filters, weighers and request filters in
# $NOVA_CONF; runs the policy API service; optionally adds the Watcher goal
# and strategy to watcher.conf and the dashboard's panels to Horizon. Phases: stack install |
# post-config | extra, unstack, clean.

NSP_FILTERS_PATH=nova_scoped_policies.scheduler.filters.all_filters
NSP_WEIGHERS_PATH=nova_scoped_policies.scheduler.weights.all_weighers
NSP_FILTER_NAMES="ScopedAffinityFilter ScopedAntiAffinityFilter"
NSP_OPTIONS="enable_scoped_policy_query_filter enable_forbidden_aggregates_filter aggregate_refresh_interval nova_seam"
NSP_WATCHER_GROUP=watcher_strategies.scoped_policy_repair

# available_filters repeats its key (a multi-valued option); enabled_filters
# and weight_classes are comma-separated lists.

# _nsp_multi_add OPTION NOVA_DEFAULT OURS: keep the option's values (nova's
# default when unset) and add ours once.
function _nsp_multi_add {
    local option=$1 nova_default=$2 ours=$3
    local current
    current=$(iniget_multiline $NOVA_CONF filter_scheduler $option)
    if [[ -z "$current" ]]; then
        iniadd $NOVA_CONF filter_scheduler $option $nova_default
    fi
    if ! echo "$current" | grep -qx "$ours"; then
        iniadd $NOVA_CONF filter_scheduler $option $ours
    fi
}

# _nsp_multi_remove OPTION OURS: drop our value, keep the others.
function _nsp_multi_remove {
    local option=$1 ours=$2
    local kept
    kept=$(iniget_multiline $NOVA_CONF filter_scheduler $option | grep -vx "$ours")
    inidelete $NOVA_CONF filter_scheduler $option
    if [[ -n "$kept" ]]; then
        iniset_multiline $NOVA_CONF filter_scheduler $option $kept
    fi
}

# _nsp_list_add OPTION NOVA_DEFAULT NAME...: keep the list (nova's default
# when unset) and append each NAME once.
function _nsp_list_add {
    local option=$1 nova_default=$2
    shift 2
    local value name
    value=$(iniget $NOVA_CONF filter_scheduler $option)
    value=${value:-$nova_default}
    for name in "$@"; do
        if [[ ",$value," != *",$name,"* ]]; then
            value="$value,$name"
        fi
    done
    iniset $NOVA_CONF filter_scheduler $option "$value"
}

# _nsp_list_remove OPTION NAME...: drop each NAME from the list.
function _nsp_list_remove {
    local option=$1
    shift
    local value name
    value=$(iniget $NOVA_CONF filter_scheduler $option)
    for name in "$@"; do
        value=$(echo ",$value," | sed -e "s/,$name,/,/g" -e 's/^,//' -e 's/,$//')
    done
    iniset $NOVA_CONF filter_scheduler $option "$value"
}

function install_nova_scoped_policies {
    local extras=""
    if [[ "$NOVA_SCOPED_POLICIES_WATCHER" == "True" ]]; then
        # with the [watcher] extra (python-watcher, OR-Tools): devstack's
        # one virtualenv is Watcher's too
        extras="watcher"
    fi
    if [[ "$NOVA_SCOPED_POLICIES_DASHBOARD" == "True" ]]; then
        # the [dashboard] extra where Horizon runs (devstack's one venv)
        extras="${extras:+$extras,}dashboard"
    fi
    if [[ -n "$extras" ]]; then
        setup_develop $NOVA_SCOPED_POLICIES_DIR $extras
    else
        setup_develop $NOVA_SCOPED_POLICIES_DIR
    fi
}

# configure_nova_scoped_policies_dashboard: Horizon loads the plugin's
# panels from its enabled/ files (devstack collects the static files and
# starts Horizon after post-config).
function configure_nova_scoped_policies_dashboard {
    local enabled=$NOVA_SCOPED_POLICIES_HORIZON_DIR/openstack_dashboard/local/enabled
    mkdir -p $enabled
    cp $NOVA_SCOPED_POLICIES_DIR/nova_scoped_policies/dashboard/enabled/_9*_scoped_policies_*.py $enabled/
}

function cleanup_nova_scoped_policies_dashboard {
    rm -f $NOVA_SCOPED_POLICIES_HORIZON_DIR/openstack_dashboard/local/enabled/_9*_scoped_policies_*.py
}

function configure_nova_scoped_policies {
    _nsp_multi_add available_filters nova.scheduler.filters.all_filters $NSP_FILTERS_PATH
    _nsp_list_add weight_classes nova.scheduler.weights.all_weighers $NSP_WEIGHERS_PATH
    # Our filters join nova's. nova's ServerGroup*Filter names stay: the
    # conductor, which reads this nova.conf too, refuses group boots
    # without them.
    _nsp_list_add enabled_filters $NOVA_SCOPED_POLICIES_NOVA_FILTERS $NSP_FILTER_NAMES

    iniset $NOVA_CONF scoped_policies enable_scoped_policy_query_filter $NOVA_SCOPED_POLICIES_QUERY_FILTER
    iniset $NOVA_CONF scoped_policies enable_forbidden_aggregates_filter $NOVA_SCOPED_POLICIES_FORBIDDEN_AGGREGATES
    iniset $NOVA_CONF scoped_policies aggregate_refresh_interval $NOVA_SCOPED_POLICIES_REFRESH
    # the nova seam, installed when nova-scheduler starts; its listener
    # needs nova's versioned notifications (aggregate.*)
    iniset $NOVA_CONF scoped_policies nova_seam True
    local format
    format=$(iniget $NOVA_CONF notifications notification_format)
    if [[ -z "$format" || "$format" == "unversioned" ]]; then
        iniset $NOVA_CONF notifications notification_format both
    fi
    local driver
    driver=$(iniget_multiline $NOVA_CONF oslo_messaging_notifications driver)
    if ! echo "$driver" | grep -qx 'messaging\(v2\)\?'; then
        iniset $NOVA_CONF oslo_messaging_notifications driver messagingv2
    fi
    # each nova-scheduler process listens on a queue of its own; those of
    # stopped schedulers expire after 10 minutes unused
    if command -v rabbitmqctl >/dev/null || declare -F rabbitmqctl >/dev/null; then
        sudo rabbitmqctl set_policy nova-scoped-policies-aggregates \
            '^nova-scoped-policies-aggregates\.' '{"expires":600000}' \
            --apply-to queues || true
    fi
}

# configure_nova_scoped_policies_api: the service's own config file, its
# database, and the scheduler's store driver in $NOVA_CONF.
function configure_nova_scoped_policies_api {
    local conf=$NOVA_SCOPED_POLICIES_CONF
    local connection=$NOVA_SCOPED_POLICIES_STORE_CONNECTION
    sudo install -d -o $STACK_USER $NOVA_SCOPED_POLICIES_CONF_DIR
    if [[ "$connection" == sqlite:///* ]]; then
        mkdir -p "$(dirname "${connection#sqlite:///}")"
    fi
    iniset $conf DEFAULT debug $ENABLE_DEBUG_LOG_LEVEL
    iniset $conf policy_store connection "$connection"
    iniset $conf scoped_policies_api auth_strategy keystone
    iniset $conf scoped_policies_api bind_host $SERVICE_LISTEN_ADDRESS
    iniset $conf scoped_policies_api bind_port $NOVA_SCOPED_POLICIES_API_PORT
    # an export writes nova-scheduler's options as the scenario's config
    iniset $conf scoped_policies_api scheduler_config_files $NOVA_CONF
    create_service_user nova-scoped-policies admin
    configure_keystone_authtoken_middleware $conf nova-scoped-policies
    configure_keystone_authtoken_middleware $conf nova-scoped-policies placement
    configure_keystone_authtoken_middleware $conf nova-scoped-policies nova
    $NOVA_SCOPED_POLICIES_BIN_DIR/nova-scoped-policies-manage db sync --config-file $conf

    iniset $NOVA_CONF scoped_policies store_driver sql
    iniset $NOVA_CONF policy_store connection "$connection"
}

# configure_nova_scoped_policies_service_role: nova's service user, which
# nova-scheduler runs as, gets the service role (Secure RBAC): the policy
# API's rules let that role read what the scheduler reads (scopes in real
# identifiers, every project's groups, the stacks it boots) and give a stack
# member's hold back as it boots. With NOVA_SCOPED_POLICIES_STORE_DRIVER=http
# the scheduler reads the policy API as that user ([policy_api]).
function configure_nova_scoped_policies_service_role {
    get_or_create_role service
    get_or_add_user_project_role service nova $SERVICE_PROJECT_NAME
    if [[ "$NOVA_SCOPED_POLICIES_STORE_DRIVER" == "http" ]]; then
        iniset $NOVA_CONF scoped_policies store_driver http
        inidelete $NOVA_CONF policy_store connection
        configure_keystone_authtoken_middleware $NOVA_CONF nova policy_api
    fi
}

# configure_nova_scoped_policies_watcher: the strategy scoped_policy_repair
# reads the policy store; Watcher's decision engine, started later by
# Watcher's plugin, finds the goal, the strategy and the planner
# scoped_policy_sequence through their entry points.
function configure_nova_scoped_policies_watcher {
    iniset $NOVA_SCOPED_POLICIES_WATCHER_CONF $NSP_WATCHER_GROUP policy_store_connection "$NOVA_SCOPED_POLICIES_STORE_CONNECTION"
}

function start_nova_scoped_policies_api {
    run_process nova-scoped-policies-api "$NOVA_SCOPED_POLICIES_BIN_DIR/nova-scoped-policies-api --config-file $NOVA_SCOPED_POLICIES_CONF"
    local url="$SERVICE_PROTOCOL://$SERVICE_HOST:$NOVA_SCOPED_POLICIES_API_PORT"
    get_or_create_service nova-scoped-policies scoped-policies "Scoped server group policies"
    get_or_create_endpoint scoped-policies "$REGION_NAME" "$url"
    wait_for_service $SERVICE_TIMEOUT "$url/"
}

# create_nova_scoped_policies_examples: one aggregate <scope>-1 holding this
# host, made a domain of <scope> through the policy API (or by aggregate
# metadata when the API is disabled).
function create_nova_scoped_policies_examples {
    local scope=$NOVA_SCOPED_POLICIES_EXAMPLE_SCOPE
    [[ -n "$scope" ]] || return 0
    local agg="${scope}-1" uuid
    local os="openstack --os-cloud devstack-admin"
    uuid=$($os aggregate show -f value -c uuid $agg 2>/dev/null) || true
    if [[ -z "$uuid" ]]; then
        if [[ "$NOVA_SCOPED_POLICIES_API" == "True" ]]; then
            uuid=$($os aggregate create -f value -c uuid $agg)
        else
            uuid=$($os aggregate create -f value -c uuid \
                --property policy_scope=$scope $agg)
        fi
        $os aggregate add host $agg ${NOVA_SCOPED_POLICIES_HOST:-$(hostname)}
    fi
    if [[ "$NOVA_SCOPED_POLICIES_API" == "True" ]]; then
        if ! $os scoped policy scope show $scope >/dev/null 2>&1; then
            $os scoped policy scope create $scope --aggregate $uuid
        fi
    fi
}

function cleanup_nova_scoped_policies {
    _nsp_multi_remove available_filters $NSP_FILTERS_PATH
    _nsp_list_remove weight_classes $NSP_WEIGHERS_PATH
    _nsp_list_remove enabled_filters $NSP_FILTER_NAMES
    local name
    for name in $NSP_OPTIONS; do
        inidelete $NOVA_CONF scoped_policies $name
    done
    inidelete $NOVA_CONF scoped_policies store_driver
    inidelete $NOVA_CONF policy_store connection
    local connection=$NOVA_SCOPED_POLICIES_STORE_CONNECTION
    if [[ "$connection" == sqlite:///* ]]; then
        rm -f "${connection#sqlite:///}"
    fi
    sudo rm -rf $NOVA_SCOPED_POLICIES_CONF_DIR
    if [[ -f $NOVA_SCOPED_POLICIES_WATCHER_CONF ]]; then
        inidelete $NOVA_SCOPED_POLICIES_WATCHER_CONF $NSP_WATCHER_GROUP policy_store_connection
    fi
    cleanup_nova_scoped_policies_dashboard
    pip_uninstall nova-scoped-policies
}

if [[ "$1" == "stack" && "$2" == "install" ]]; then
    echo_summary "Installing nova-scoped-policies"
    install_nova_scoped_policies
elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
    echo_summary "Enabling nova-scoped-policies in $NOVA_CONF"
    configure_nova_scoped_policies
    if [[ "$NOVA_SCOPED_POLICIES_API" == "True" ]]; then
        configure_nova_scoped_policies_api
        configure_nova_scoped_policies_service_role
    fi
    if [[ "$NOVA_SCOPED_POLICIES_WATCHER" == "True" ]]; then
        configure_nova_scoped_policies_watcher
    fi
    if [[ "$NOVA_SCOPED_POLICIES_DASHBOARD" == "True" ]]; then
        echo_summary "Enabling the nova-scoped-policies dashboard in Horizon"
        configure_nova_scoped_policies_dashboard
    fi
elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
    if [[ "$NOVA_SCOPED_POLICIES_API" == "True" ]]; then
        echo_summary "Starting the nova-scoped-policies API"
        start_nova_scoped_policies_api
    fi
    echo_summary "Creating nova-scoped-policies example scopes"
    create_nova_scoped_policies_examples
fi

if [[ "$1" == "unstack" ]]; then
    stop_process nova-scoped-policies-api
fi

if [[ "$1" == "clean" ]]; then
    cleanup_nova_scoped_policies
fi

# --- The Tempest plugin (nova_scoped_policies/tempest) ---------------------
# NOVA_SCOPED_POLICIES_TEMPEST=True installs it into Tempest's own
# virtualenv (devstack's $TEMPEST_DIR/.tox/tempest) without our
# requirements, as Tempest plugins go in, and tells Tempest what this cloud
# has ([service_available] scoped_policies, [scoped_policies]) at the
# test-config phase, after devstack wrote tempest.conf. Then:
#   tempest run --regex nova_scoped_policies
NOVA_SCOPED_POLICIES_TEMPEST=$(trueorfalse False NOVA_SCOPED_POLICIES_TEMPEST)
NOVA_SCOPED_POLICIES_TEMPEST_VENV=${NOVA_SCOPED_POLICIES_TEMPEST_VENV:-${TEMPEST_DIR:-$DEST/tempest}/.tox/tempest}

function install_nova_scoped_policies_tempest {
    $NOVA_SCOPED_POLICIES_TEMPEST_VENV/bin/pip install --no-deps -e $NOVA_SCOPED_POLICIES_DIR
}

function configure_nova_scoped_policies_tempest {
    iniset $TEMPEST_CONFIG service_available scoped_policies $NOVA_SCOPED_POLICIES_API
    iniset $TEMPEST_CONFIG scoped_policies scope ${NOVA_SCOPED_POLICIES_EXAMPLE_SCOPE:-rack}
    # a policy change reaches the schedulers within their cache's lifetime
    local ttl
    ttl=$(iniget $NOVA_CONF scoped_policies store_cache_ttl)
    iniset $TEMPEST_CONFIG scoped_policies store_cache_ttl ${ttl:-10}
}

if [[ "$1" == "stack" && "$2" == "test-config" && "$NOVA_SCOPED_POLICIES_TEMPEST" == "True" ]]; then
    echo_summary "Installing the nova-scoped-policies Tempest plugin"
    install_nova_scoped_policies_tempest
    configure_nova_scoped_policies_tempest
fi
